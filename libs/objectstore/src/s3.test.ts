import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { freePort } from '@switchboard/devcluster';
import { createObjectStore } from './create.js';
import { LocalObjectStore } from './local.js';
import { InvalidObjectKeyError, ObjectStoreError, OWNER_KEY_ID_METADATA } from './object-store.js';
import { S3rver, type S3rverInstance } from './test-support.js';
import { S3ObjectStore, carriedRange, lifecycleConfig, parseEndpoint } from './s3.js';

describe('S3ObjectStore against s3rver', () => {
  let dir: string;
  let server: S3rverInstance;
  let endpoint: string;
  const credentials = { accessKey: 'S3RVER', secretKey: 'S3RVER', region: 'us-east-1' };
  let store: S3ObjectStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-s3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    store = new S3ObjectStore({
      endpoint,
      ...credentials,
      bucket: 'switchboard-unit',
      retentionDays: { 'screenshots/': 7 },
    });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the bucket (idempotently) and reports that s3rver has no lifecycle support', async () => {
    assert.deepEqual(await store.ensureReady(), { lifecycle: 'unsupported' });
    assert.deepEqual(await store.ensureReady(), { lifecycle: 'unsupported' });
  });

  it('puts, stats, gets and deletes with content type and owner metadata', async () => {
    const body = Buffer.from('\x89PNG\r\n\x1a\n…bytes');
    await store.put('screenshots/s1/capture-1700000000000.png', body, {
      contentType: 'image/png',
      metadata: { [OWNER_KEY_ID_METADATA]: 'key-1' },
    });
    assert.deepEqual(await store.stat('screenshots/s1/capture-1700000000000.png'), {
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
    await store.delete('screenshots/s1/capture-1700000000000.png');
  });

  it('stores a stream of known length in one request', async () => {
    const chunks = [Buffer.alloc(100_000, 7), Buffer.alloc(50_000, 9)];
    await store.put('videos/job-1.mp4', Readable.from(chunks), {
      contentType: 'video/mp4',
      metadata: {},
      size: 150_000,
    });
    const got = await store.get('videos/job-1.mp4');
    assert.ok(got);
    assert.equal(got.size, 150_000);
    assert.deepEqual(await buffer(got.stream), Buffer.concat(chunks));
  });

  it('asks the server for just the bytes of a range', async () => {
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    await store.put('videos/job-r.mp4', body, {
      contentType: 'video/mp4',
      metadata: { [OWNER_KEY_ID_METADATA]: 'key-1' },
    });
    const ranges: (string | undefined)[] = [];
    const record = (req: IncomingMessage) => ranges.push(req.headers.range);
    server.httpServer?.on('request', record);
    try {
      const got = await store.get('videos/job-r.mp4', { range: { start: 250_000, end: 250_099 } });
      assert.ok(got);
      assert.deepEqual([got.size, got.range], [300_000, { start: 250_000, end: 250_099 }]);
      assert.deepEqual([got.contentType, got.metadata], ['video/mp4', { 'owner-key-id': 'key-1' }]);
      assert.deepEqual(await buffer(got.stream), body.subarray(250_000, 250_100));
      const tail = await store.get('videos/job-r.mp4', { range: { start: 299_990, end: 10_000_000 } });
      assert.deepEqual(tail?.range, { start: 299_990, end: 299_999 });
      assert.deepEqual(await buffer(tail.stream), body.subarray(299_990));
    } finally {
      server.httpServer?.off('request', record);
    }
    assert.deepEqual(ranges, ['bytes=250000-250099', 'bytes=299990-10000000']);
    await assert.rejects(
      store.get('videos/job-r.mp4', { range: { start: 300_000, end: 300_001 } }),
      ObjectStoreError,
    );
    await assert.rejects(store.get('videos/job-r.mp4', { range: { start: 2, end: 1 } }), TypeError);
    assert.equal(await store.get('videos/job-none.mp4', { range: { start: 0, end: 1 } }), null);
  });

  it('rejects bad keys before any request', async () => {
    await assert.rejects(store.get('../x'), InvalidObjectKeyError);
    await assert.rejects(store.get('/abs'), InvalidObjectKeyError);
  });

  it('fails with an ObjectStoreError naming no bucket when the server refuses or is gone', async () => {
    await store.put('images/img-1.png', Buffer.from('png'), { contentType: 'image/png', metadata: {} });
    const wrong = new S3ObjectStore({
      endpoint,
      ...credentials,
      accessKey: 'UNKNOWN-KEY', // s3rver checks access key ids (it does not verify V4 signatures)
      bucket: 'switchboard-unit',
      retentionDays: {},
    });
    const error = await wrong.get('images/img-1.png').then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ObjectStoreError, String(error));
    assert.doesNotMatch(error.message, /switchboard-unit/);
    assert.equal(error.unreachable, false, 'a refused credential is not an outage');

    const gone = new S3ObjectStore({
      endpoint: `http://127.0.0.1:${await freePort()}`,
      ...credentials,
      bucket: 'switchboard-unit',
      retentionDays: {},
    });
    await assert.rejects(gone.get('images/img-1.png'), (e) => e instanceof ObjectStoreError && e.unreachable);
    await assert.rejects(
      gone.put('images/img-2.png', Buffer.from('png'), { contentType: 'image/png', metadata: {} }),
      (e) => e instanceof ObjectStoreError && e.unreachable,
    );
    await assert.rejects(gone.ensureReady(), ObjectStoreError);
  });

  it('is what createObjectStore picks when an endpoint is configured', () => {
    const s3 = createObjectStore({
      s3: { endpoint, ...credentials, bucket: 'b-b-b' },
      directory: dir,
      retentionDays: {},
    });
    assert.ok(s3 instanceof S3ObjectStore);
    assert.ok(createObjectStore({ directory: dir, retentionDays: {} }) instanceof LocalObjectStore);
  });
});

describe('S3 helpers', () => {
  it('builds one expiration rule per prefix', () => {
    assert.deepEqual(lifecycleConfig({ 'screenshots/': 7, 'videos/': 30 }), {
      Rule: [
        {
          ID: 'expire-screenshots-',
          Status: 'Enabled',
          Filter: { Prefix: 'screenshots/' },
          Expiration: { Days: 7 },
        },
        { ID: 'expire-videos-', Status: 'Enabled', Filter: { Prefix: 'videos/' }, Expiration: { Days: 30 } },
      ],
    });
    assert.throws(() => lifecycleConfig({ 'x/': 0 }), TypeError);
  });

  it('reads what a ranged answer carries', () => {
    assert.deepEqual(carriedRange('bytes 10-19/100', 10), { start: 10, end: 19, size: 100 });
    assert.deepEqual(carriedRange(undefined, 100), { start: 0, end: 99, size: 100 }, 'range ignored: 200');
    assert.equal(carriedRange('bytes 10-19/100', 9), null);
    assert.equal(carriedRange('bytes 10-100/100', 91), null);
    assert.equal(carriedRange('bytes */100', 0), null);
    assert.equal(carriedRange(undefined, 0), null);
  });

  it('parses endpoints', () => {
    assert.deepEqual(parseEndpoint('http://minio:9000'), { endPoint: 'minio', port: 9000, useSSL: false });
    assert.deepEqual(parseEndpoint('https://s3.example.com'), {
      endPoint: 's3.example.com',
      port: 443,
      useSSL: true,
    });
    assert.deepEqual(parseEndpoint('http://[::1]:9000'), { endPoint: '::1', port: 9000, useSSL: false });
    assert.throws(() => parseEndpoint('ftp://x'), TypeError);
    assert.throws(() => parseEndpoint('http://x/bucket'), TypeError);
  });
});
