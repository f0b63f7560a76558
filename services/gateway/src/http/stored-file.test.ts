import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestedRange } from './stored-file.js';

test('one byte range is served, cut to the file', () => {
  assert.deepEqual(requestedRange('bytes=0-99', 1000), { start: 0, end: 99 });
  assert.deepEqual(requestedRange('bytes=500-', 1000), { start: 500, end: 999 });
  assert.deepEqual(requestedRange('bytes=900-5000', 1000), { start: 900, end: 999 });
  assert.deepEqual(requestedRange('bytes=999-999', 1000), { start: 999, end: 999 });
  assert.deepEqual(requestedRange('bytes=-100', 1000), { start: 900, end: 999 }, 'the last 100 bytes');
  assert.deepEqual(
    requestedRange('bytes=-5000', 1000),
    { start: 0, end: 999 },
    'a suffix longer than the file',
  );
  assert.deepEqual(requestedRange('Bytes=1-2', 1000), { start: 1, end: 2 }, 'the unit is case-insensitive');
  assert.deepEqual(requestedRange(`bytes=1-${'9'.repeat(40)}`, 1000), { start: 1, end: 999 });
});

test('a range that selects nothing of the file is refused', () => {
  assert.equal(requestedRange('bytes=1000-', 1000), 'unsatisfiable');
  assert.equal(requestedRange('bytes=1000-2000', 1000), 'unsatisfiable');
  assert.equal(requestedRange(`bytes=${'9'.repeat(40)}-`, 1000), 'unsatisfiable');
  assert.equal(requestedRange('bytes=-0', 1000), 'unsatisfiable');
  assert.equal(requestedRange('bytes=0-', 0), 'unsatisfiable', 'nothing of an empty file');
  assert.equal(requestedRange('bytes=-1', 0), 'unsatisfiable');
});

test('anything else is ignored and the whole file sent', () => {
  for (const header of [
    undefined,
    '',
    'bytes=',
    'bytes=-',
    'bytes=5-4',
    'bytes=a-b',
    'bytes=1.5-2',
    'bytes=--1',
    'items=0-1',
    'bytes 0-1',
    'bytes=0-1,5-6', // several ranges: the whole file, never a multipart body
    'bytes=0-1, 3-',
  ]) {
    assert.equal(requestedRange(header, 1000), null, JSON.stringify(header));
  }
});
