import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  LocalObjectStore,
  OWNER_KEY_ID_METADATA,
  S3ObjectStore,
  type ObjectStore,
} from '@switchboard/objectstore';
import { type CreatedKey, bearer, createKey } from '../support/admin.js';
import { startGateway } from '../support/gateway.js';
import { startS3, type S3Server } from '../support/s3.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

/**
 * GET of a raw path, byte for byte: fetch would resolve `..` and `%2e%2e` segments itself and
 * never send the tricks this test is about.
 */
function rawGet(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (typeof value === 'string') responseHeaders.set(name, value);
        }
        resolve(
          new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), {
            status: res.statusCode,
            headers: responseHeaders,
          }),
        );
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function expectNotFound(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 404, what);
  assert.equal((await errorOf(res)).code, 'not_found', what);
}

const png = (bytes: number) =>
  Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(bytes - 8)]);

async function putOwned(
  store: ObjectStore,
  key: string,
  body: Buffer,
  contentType: string,
  owner: CreatedKey,
): Promise<void> {
  await store.put(key, body, { contentType, metadata: { [OWNER_KEY_ID_METADATA]: owner.id } });
}

describe('gateway stored files from S3 (s3rver)', () => {
  const bucket = 'switchboard-it';
  const sessionId = randomUUID();
  const capture = 'capture-1700000000123.png';
  const image = png(3_000_000);
  const video = randomBytes(200_000);
  const poster = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(5_000)]);
  const screenshot = png(4_000);
  let s3: S3Server;
  let stack: Stack;
  let owner: CreatedKey;
  let other: CreatedKey;

  before(async () => {
    s3 = await startS3();
    stack = await startStack({ env: s3.env(bucket) });
    [owner, other] = await Promise.all([createKey(stack.gateway), createKey(stack.gateway)]);
    // Written as the workers will: straight into the store, owner = the key's id.
    const store = new S3ObjectStore({
      endpoint: s3.endpoint,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: s3.region,
      bucket,
      retentionDays: { 'screenshots/': 7 },
    });
    await store.ensureReady();
    await putOwned(store, 'images/img-abc-123.png', image, 'image/png', owner);
    await putOwned(store, 'videos/job-xyz-9.mp4', video, 'video/mp4', owner);
    await putOwned(store, 'videos/job-xyz-9.jpg', poster, 'image/jpeg', owner);
    await putOwned(store, `screenshots/${sessionId}/${capture}`, screenshot, 'image/png', owner);
  });
  after(async () => {
    await stack?.stop();
    await s3?.stop();
  });

  const cases = () => [
    { path: '/api/images/img-abc-123.png', body: image, type: 'image/png' },
    { path: '/api/videos/job-xyz-9.mp4', body: video, type: 'video/mp4' },
    { path: '/api/videos/job-xyz-9.jpg', body: poster, type: 'image/jpeg' },
    { path: `/api/browser/screenshots/${sessionId}/${capture}`, body: screenshot, type: 'image/png' },
  ];

  it('streams each file to its owner with its bytes, type and length', async () => {
    for (const { path, body, type } of cases()) {
      const res = await fetch(`${stack.gateway.url}${path}`, { headers: bearer(owner.key) });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), type, path);
      assert.equal(res.headers.get('content-length'), String(body.length), path);
      assert.match(res.headers.get('cache-control') ?? '', /^private, max-age=\d+$/, path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('accept-ranges'), 'bytes', path);
      assert.ok(res.headers.get('x-request-id'), path);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(body), path);
    }
  });

  it('answers another key exactly as for a missing file', async () => {
    for (const { path } of cases()) {
      await expectNotFound(
        await fetch(`${stack.gateway.url}${path}`, { headers: bearer(other.key) }),
        `other key: ${path}`,
      );
    }
    for (const path of [
      '/api/images/img-nope.png',
      '/api/videos/job-nope.mp4',
      '/api/videos/job-nope.jpg',
      `/api/browser/screenshots/${sessionId}/capture-1700000000999.png`,
      `/api/browser/screenshots/${randomUUID()}/${capture}`,
    ]) {
      await expectNotFound(
        await fetch(`${stack.gateway.url}${path}`, { headers: bearer(owner.key) }),
        `missing: ${path}`,
      );
    }
  });

  it('rejects malformed and encoded names with 404 without asking the store', async () => {
    const shots = `/api/browser/screenshots/${sessionId}`;
    const paths = [
      '/api/images/..%2F..%2Fimages%2Fimg-abc-123.png',
      '/api/images/%2e%2e',
      '/api/images/%2e%2e%2fimg-abc-123.png',
      '/api/images/img-abc-123.PNG',
      '/api/images/img-abc-123.png.exe',
      '/api/images/img-abc%2F123.png',
      '/api/images/img-abc-123.png%00',
      '/api/images/img-abc_123.png',
      '/api/images/abc-123.png',
      `/api/images/img-${'a'.repeat(65)}.png`,
      '/api/videos/job-..%2Fxyz.mp4',
      '/api/videos/job-xyz-9.MP4',
      '/api/videos/job-xyz-9.jpeg',
      '/api/videos/job-xyz-9.png',
      '/api/videos/img-abc-123.png',
      `${shots}/capture-1.png`,
      `${shots}/capture-170000000012.png`,
      `${shots}/capture-1700000000123.png.exe`,
      `${shots}/capture-1700000000123.PNG`,
      `${shots}/Capture-1700000000123.png`,
      `${shots}/capture-1700000000123.png%2F..`,
      `${shots}/..%2F${capture}`,
      `${shots}/%2e%2e%2F${capture}`,
      `/api/browser/screenshots/not-a-uuid/${capture}`,
      `/api/browser/screenshots/${sessionId.toUpperCase()}/${capture}`,
      `/api/browser/screenshots/${sessionId.replace(/^(.{14})4/, '$11')}/${capture}`,
      `/api/browser/screenshots/%2e%2e/${capture}`,
      `/api/browser/screenshots/${sessionId}%2F..%2F${sessionId}/${capture}`,
      `/api/browser/screenshots/..%5C${sessionId}/${capture}`,
    ];
    const before = s3.requests.length;
    for (const path of paths) {
      await expectNotFound(await rawGet(stack.gateway.url, path, bearer(owner.key)), path);
    }
    assert.deepEqual(s3.requests.slice(before), [], 'the store was consulted');

    // The control: a well-formed name does reach the store.
    await rawGet(stack.gateway.url, `${shots}/${capture}`, bearer(owner.key));
    assert.ok(s3.requests.length > before);
  });

  it('answers one byte range with 206 and just those bytes, read from the store as a range', async () => {
    const url = `${stack.gateway.url}/api/videos/job-xyz-9.mp4`;
    const size = video.length;
    const before = s3.requests.length;
    for (const [range, start, end] of [
      ['bytes=1000-1999', 1000, 1999],
      ['bytes=150000-', 150_000, size - 1],
      ['bytes=-100', size - 100, size - 1],
      ['bytes=199990-500000', 199_990, size - 1],
      // (Not `bytes=0-0`: s3rver reads an end of 0 as none and sends it all, with a Content-Range
      // saying so, which the gateway then passes on; S3 and MinIO send the one byte.)
      ['bytes=0-1', 0, 1],
    ] as const) {
      const res = await fetch(url, { headers: { ...bearer(owner.key), range } });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${size}`, range);
      assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
      assert.equal(res.headers.get('content-type'), 'video/mp4', range);
      assert.equal(res.headers.get('accept-ranges'), 'bytes', range);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(video.subarray(start, end + 1)), range);
    }
    // Each ranged read: the description first (owner, size), then the bytes, never a whole GET
    // followed by skipping (the ranged GET itself is checked in the object store's own tests).
    const key = '/switchboard-it/videos/job-xyz-9.mp4';
    assert.deepEqual(
      s3.requests.slice(before).map((r) => r.split('?')[0]),
      Array.from({ length: 5 }, () => [`HEAD ${key}`, `GET ${key}`]).flat(),
    );

    const part = await fetch(`${stack.gateway.url}/api/images/img-abc-123.png`, {
      headers: { ...bearer(owner.key), range: 'bytes=0-7' },
    });
    assert.equal(part.status, 206, 'images have ranges too');
    assert.equal(part.headers.get('content-range'), `bytes 0-7/${image.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(image.subarray(0, 8)));
  });

  it('refuses a range past the end with a JSON 416, and sends the whole file for anything else', async () => {
    const url = `${stack.gateway.url}/api/videos/job-xyz-9.mp4`;
    for (const range of ['bytes=200000-', 'bytes=300000-300001', 'bytes=-0', 'bytes=999999999-']) {
      const res = await fetch(url, { headers: { ...bearer(owner.key), range } });
      assert.equal(res.status, 416, range);
      assert.equal(res.headers.get('content-range'), `bytes */${video.length}`, range);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, range);
      const error = await errorOf(res);
      assert.equal(error.code, 'invalid_request', range);
      assert.equal(error.request_id, res.headers.get('x-request-id'), range);
    }
    const wholeFile: Record<string, string>[] = [
      { range: 'bytes=0-1,5-6' }, // several ranges: no multipart body, the whole file
      { range: 'bytes=9-3' },
      { range: 'items=0-1' },
      { range: 'bytes=0-1', 'if-range': '"some-etag"' },
    ];
    for (const headers of wholeFile) {
      const res = await fetch(url, { headers: { ...bearer(owner.key), ...headers } });
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.equal(res.headers.get('content-range'), null);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(video), JSON.stringify(headers));
    }
    // Another key learns nothing, not even the size: 404 as for a missing file, whatever the range.
    for (const range of ['bytes=0-9', 'bytes=999999-']) {
      await expectNotFound(
        await fetch(url, { headers: { ...bearer(other.key), range } }),
        `other key, ${range}`,
      );
      await expectNotFound(
        await fetch(`${stack.gateway.url}/api/videos/job-nope.mp4`, {
          headers: { ...bearer(owner.key), range },
        }),
        `missing, ${range}`,
      );
    }
  });

  it('needs a key', async () => {
    for (const { path } of cases()) {
      const res = await fetch(`${stack.gateway.url}${path}`);
      assert.equal(res.status, 401, path);
      assert.equal((await errorOf(res)).code, 'unauthorized');
    }
  });

  it('answers 503 unavailable, naming no bucket, when the store is down', async () => {
    await s3.stop();
    const res = await fetch(`${stack.gateway.url}/api/images/img-abc-123.png`, {
      headers: bearer(owner.key),
    });
    assert.equal(res.status, 503);
    const error = await errorOf(res);
    assert.equal(error.code, 'unavailable');
    assert.doesNotMatch(JSON.stringify(error), new RegExp(bucket));
  });
});

describe('gateway stored files from a local directory', () => {
  let dir: string;
  let stack: Stack;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-objects-it-'));
    stack = await startStack({ env: { OBJECT_STORE_DIR: dir } });
  });
  after(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves the owner and hides the file from another key', async () => {
    const [owner, other] = await Promise.all([createKey(stack.gateway), createKey(stack.gateway)]);
    const sessionId = randomUUID();
    const body = png(10_000);
    await putOwned(
      new LocalObjectStore(dir),
      `screenshots/${sessionId}/capture-1700000000000.png`,
      body,
      'image/png',
      owner,
    );
    const url = `${stack.gateway.url}/api/browser/screenshots/${sessionId}/capture-1700000000000.png`;

    const res = await fetch(url, { headers: bearer(owner.key) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(body.length));
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(body));

    await expectNotFound(await fetch(url, { headers: bearer(other.key) }), 'other key');
    const part = await fetch(url, { headers: { ...bearer(owner.key), range: 'bytes=-16' } });
    assert.equal(part.status, 206);
    assert.equal(
      part.headers.get('content-range'),
      `bytes ${body.length - 16}-${body.length - 1}/${body.length}`,
    );
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(body.subarray(body.length - 16)));
    const past = await fetch(url, { headers: { ...bearer(owner.key), range: `bytes=${body.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${body.length}`);
    assert.equal((await errorOf(past)).code, 'invalid_request');
    await expectNotFound(
      await rawGet(
        stack.gateway.url,
        `/api/browser/screenshots/${sessionId}/..%2F..%2Fmeta`,
        bearer(owner.key),
      ),
      'traversal',
    );
  });
});

describe('gateway object store configuration', () => {
  it('refuses to start with an S3 endpoint but no credentials', async () => {
    await assert.rejects(
      startGateway({ S3_ENDPOINT: 'http://127.0.0.1:9000' }),
      (error: Error) => /S3_ACCESS_KEY/.test(error.message) && /S3_SECRET_KEY/.test(error.message),
    );
  });
});
