import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { LocalObjectStore } from './local.js';
import { InvalidObjectKeyError, ObjectStoreError, OWNER_KEY_ID_METADATA } from './object-store.js';

describe('LocalObjectStore', () => {
  let dir: string;
  let store: LocalObjectStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-objects-'));
    store = new LocalObjectStore(join(dir, 'root'));
    assert.deepEqual(await store.ensureReady(), { lifecycle: 'none' });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('puts, stats, gets and deletes an object with its metadata', async () => {
    const body = Buffer.from('\x89PNG\r\n\x1a\nnot really');
    await store.put('screenshots/s1/capture-1700000000000.png', body, {
      contentType: 'image/png',
      metadata: { [OWNER_KEY_ID_METADATA]: 'key-1' },
    });
    const info = await store.stat('screenshots/s1/capture-1700000000000.png');
    assert.deepEqual(info, {
      contentType: 'image/png',
      size: body.length,
      metadata: { 'owner-key-id': 'key-1' },
    });
    const got = await store.get('screenshots/s1/capture-1700000000000.png');
    assert.ok(got);
    assert.equal(got.contentType, 'image/png');
    assert.equal(got.size, body.length);
    assert.deepEqual(got.metadata, { 'owner-key-id': 'key-1' });
    assert.deepEqual(await buffer(got.stream), body);

    await store.delete('screenshots/s1/capture-1700000000000.png');
    assert.equal(await store.get('screenshots/s1/capture-1700000000000.png'), null);
    assert.equal(await store.stat('screenshots/s1/capture-1700000000000.png'), null);
    await store.delete('screenshots/s1/capture-1700000000000.png'); // again: no error
  });

  it('streams a Readable body in and overwrites atomically, leaving no temp files', async () => {
    const chunks = [Buffer.alloc(70_000, 1), Buffer.alloc(70_000, 2)];
    await store.put('videos/job-a.mp4', Readable.from(chunks), { contentType: 'video/mp4', metadata: {} });
    await store.put('videos/job-a.mp4', Buffer.from('v2'), { contentType: 'video/mp4', metadata: {} });
    const got = await store.get('videos/job-a.mp4');
    assert.ok(got);
    assert.equal((await buffer(got.stream)).toString(), 'v2');
    assert.equal(got.size, 2);
    assert.deepEqual(await readdir(join(dir, 'root', 'tmp')), []);
  });

  it('answers null for missing objects, also under a file used as a directory', async () => {
    assert.equal(await store.get('images/img-missing.png'), null);
    await store.put('images/img-x.png', Buffer.from('x'), { contentType: 'image/png', metadata: {} });
    assert.equal(await store.get('images/img-x.png/child'), null);
  });

  it('rejects keys that could escape the root', async () => {
    const bad = [
      '',
      '../escape',
      'a/../../escape',
      'a/./b',
      '/etc/passwd',
      'a//b',
      'a/',
      'a\\..\\b',
      'a\u0000b',
      'a\nb',
      '..',
    ];
    for (const key of bad) {
      await assert.rejects(
        store.put(key, Buffer.from('x'), { contentType: 'text/plain', metadata: {} }),
        InvalidObjectKeyError,
        JSON.stringify(key),
      );
      await assert.rejects(store.get(key), InvalidObjectKeyError, JSON.stringify(key));
      await assert.rejects(store.stat(key), InvalidObjectKeyError, JSON.stringify(key));
      await assert.rejects(store.delete(key), InvalidObjectKeyError, JSON.stringify(key));
    }
    assert.deepEqual((await readdir(dir)).sort(), ['root']);
  });

  it('reads a byte range without the rest, cutting an end past the object', async () => {
    const body = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    await store.put('videos/job-r.mp4', body, { contentType: 'video/mp4', metadata: { o: 'k' } });
    const middle = await store.get('videos/job-r.mp4', { range: { start: 100, end: 199 } });
    assert.ok(middle);
    assert.deepEqual(
      [middle.size, middle.range, middle.contentType],
      [1000, { start: 100, end: 199 }, 'video/mp4'],
    );
    assert.deepEqual(middle.metadata, { o: 'k' });
    assert.deepEqual(await buffer(middle.stream), body.subarray(100, 200));

    const tail = await store.get('videos/job-r.mp4', { range: { start: 990, end: 5000 } });
    assert.deepEqual(tail?.range, { start: 990, end: 999 });
    assert.deepEqual(await buffer(tail.stream), body.subarray(990));
    const one = await store.get('videos/job-r.mp4', { range: { start: 0, end: 0 } });
    assert.deepEqual(await buffer(one!.stream), body.subarray(0, 1));

    await assert.rejects(
      store.get('videos/job-r.mp4', { range: { start: 1000, end: 1000 } }),
      ObjectStoreError,
    );
    for (const range of [
      { start: 5, end: 4 },
      { start: -1, end: 4 },
      { start: 0.5, end: 4 },
    ])
      await assert.rejects(store.get('videos/job-r.mp4', { range }), TypeError, JSON.stringify(range));
    assert.equal(await store.get('videos/job-none.mp4', { range: { start: 0, end: 1 } }), null);
  });

  it('rejects metadata that S3 could not carry', async () => {
    await assert.rejects(
      store.put('a', Buffer.from('x'), { contentType: 'text/plain', metadata: { 'Bad Name': 'v' } }),
      TypeError,
    );
    await assert.rejects(
      store.put('a', Buffer.from('x'), { contentType: 'text/plain', metadata: { ok: 'line\nbreak' } }),
      TypeError,
    );
  });
});
