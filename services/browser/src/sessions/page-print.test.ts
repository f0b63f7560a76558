import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SwitchboardError } from '@switchboard/errors';
import { countPdfPages, paperFormat } from './page-print.js';

const pdf = (body: string) => Buffer.from(`%PDF-1.4\n${body}\n%%EOF`, 'latin1');

test("the page count is the page tree root's /Count, whichever order its keys come in", () => {
  assert.equal(countPdfPages(pdf('1 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj')), 2);
  assert.equal(countPdfPages(pdf('1 0 obj <</Count 7/Kids [5 0 R 6 0 R]/Type/Pages>> endobj')), 7);
  // A nested page-tree node counts only its own leaves; the root counts them all.
  assert.equal(
    countPdfPages(pdf('<< /Type /Pages /Count 3 /Parent 1 0 R >> << /Type /Pages /Count 12 >>')),
    12,
  );
});

test('without a page tree count, the /Type /Page objects are counted', () => {
  assert.equal(countPdfPages(pdf('<< /Type /Page >> << /Type/Page /Parent 2 0 R >> << /Type /Pages >>')), 2);
});

test('paper formats: A4 by default, any case, anything else a 400 naming format', () => {
  assert.equal(paperFormat(''), 'A4');
  assert.equal(paperFormat('letter'), 'Letter');
  assert.equal(paperFormat('Legal'), 'Legal');
  assert.throws(
    () => paperFormat('A0'),
    (error: unknown) =>
      error instanceof SwitchboardError && error.code === 'invalid_request' && error.param === 'format',
  );
});
