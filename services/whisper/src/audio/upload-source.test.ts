import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { ByteBudget, KeyedByteBudget } from './byte-budget.js';
import { isIsoMedia, peek, spoolUpload, uploadSource } from './upload-source.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');
async function collect(data: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const part of data) parts.push(part);
  return Buffer.concat(parts).toString('latin1');
}

const spool = (budget = new ByteBudget(1 << 20), dir = tmpdir()) => ({
  dir,
  budget,
  retryAfterSeconds: () => 7,
});

test('ISO base media is recognised by its ftyp box; other containers are not', () => {
  assert.equal(isIsoMedia(bytes('\0\0\0\x20ftypM4A ')), true);
  assert.equal(isIsoMedia(bytes('RIFF\0\0\0\0WAVE')), false);
  assert.equal(isIsoMedia(bytes('ID3\x04')), false);
  assert.equal(isIsoMedia(bytes('')), false);
});

test('peek: the head across small chunks, then every byte exactly once', async () => {
  const { head, data } = await peek([bytes('ab'), bytes('cdef'), bytes('gh'), bytes('ij')], 5);
  assert.equal(Buffer.from(head).toString('latin1'), 'abcde');
  assert.equal(await collect(data), 'abcdefghij');
  const short = await peek([bytes('xy')], 12);
  assert.equal(Buffer.from(short.head).toString('latin1'), 'xy');
  assert.equal(await collect(short.data), 'xy');
});

test('MP4-family uploads are spooled to a file that is removed afterwards; others stay a pipe', async () => {
  const signal = new AbortController().signal;
  const piped = await uploadSource([bytes('RIFF....WAVEfmt '), bytes('rest')], spool(), signal);
  assert.equal(piped.kind, 'pipe');
  const mp4 = [bytes('\0\0\0\x18ftypM4A \0\0\0\0'), bytes('mdat...moov')];
  const spooled = await uploadSource(mp4, spool(), signal);
  assert.equal(spooled.kind, 'file');
  if (spooled.kind !== 'file') return;
  assert.equal((await readFile(spooled.path)).toString('latin1'), Buffer.concat(mp4).toString('latin1'));
  await spooled.remove();
  await assert.rejects(stat(spooled.path), { code: 'ENOENT' });
});

test('the spool budget: an upload past it → no_capacity, its partial file removed, its bytes given back', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'whisper-spool-test-'));
  try {
    const signal = new AbortController().signal;
    const budget = new ByteBudget(100);
    const first = await uploadSource(
      [bytes('\0\0\0\x18ftypM4A '), new Uint8Array(40)],
      spool(budget, dir),
      signal,
    );
    assert.equal(first.kind, 'file');
    assert.equal(budget.used, 52);
    // 52 + 72 > 100: refused at its last chunk (after writing some) while the first is still spooled.
    await assert.rejects(
      uploadSource(
        [bytes('\0\0\0\x18ftypM4A '), new Uint8Array(30), new Uint8Array(30)],
        spool(budget, dir),
        signal,
      ),
      (error) => isSwitchboardError(error) && error.code === 'no_capacity' && error.retryAfterSeconds === 7,
    );
    assert.equal((await readdir(dir)).length, 1, 'only the first upload is left in the spool');
    assert.equal(budget.used, 52);
    if (first.kind === 'file') await first.remove();
    assert.deepEqual([await readdir(dir), budget.used], [[], 0]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("spoolUpload: any upload, within its key's budget: 503 beside the key's others, 413 alone too large", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'whisper-spool-test-'));
  try {
    const signal = new AbortController().signal;
    const budget = new ByteBudget(1000);
    const perKey = new KeyedByteBudget(100);
    const keyed = { ...spool(budget, dir), perKey };
    const isCode = (code: string) => (error: unknown) => isSwitchboardError(error) && error.code === code;
    const first = await spoolUpload([bytes('RIFF....WAVEfmt '), new Uint8Array(44)], keyed, signal, 'a');
    assert.equal((await readFile(first.path)).length, 60);
    assert.deepEqual([perKey.usedBy('a'), budget.used], [60, 60]);
    // 60 + 50 > 100 for key a: no_capacity, with nothing of it kept; key b has its own 100.
    await assert.rejects(spoolUpload([new Uint8Array(50)], keyed, signal, 'a'), isCode('no_capacity'));
    assert.deepEqual([perKey.usedBy('a'), budget.used], [60, 60]);
    const other = await spoolUpload([new Uint8Array(50)], keyed, signal, 'b');
    // Larger than a key may ever hold: waiting would not help.
    await assert.rejects(
      spoolUpload([new Uint8Array(60), new Uint8Array(60)], keyed, signal, 'c'),
      (error) => isCode('payload_too_large')(error) && isSwitchboardError(error) && error.param === 'file',
    );
    assert.equal((await readdir(dir)).length, 2, 'refused uploads leave no file');
    await first.remove();
    await other.remove();
    assert.deepEqual(
      [await readdir(dir), budget.used, perKey.usedBy('a'), perKey.usedBy('b')],
      [[], 0, 0, 0],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an upload abandoned while a write is in flight is refused with its abort, and nothing else goes wrong', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-abort-'));
  try {
    const budget = new ByteBudget(1 << 30);
    const controller = new AbortController();
    async function* arriving(): AsyncIterable<Uint8Array> {
      for (let i = 0; i < 64; i++) {
        // The caller goes away while this chunk is still being written to disk.
        if (i === 2) setImmediate(() => controller.abort(new Error('client went away')));
        yield new Uint8Array(1 << 20);
      }
    }
    await assert.rejects(spoolUpload(arriving(), spool(budget, dir), controller.signal));
    // The write in flight fails after the file stream was destroyed; that late error must be
    // heard (an unheard 'error' event would end this process, and the test with it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(budget.used, 0, 'its bytes given back');
    assert.deepEqual(await readdir(dir), [], 'its file removed');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
