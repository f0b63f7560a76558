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
  const video = randomBytes(20_000);
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
    await putOwned(store, `screenshots/${sessionId}/${capture}`, screenshot, 'image/png', owner);
  });
  after(async () => {
    await stack?.stop();
    await s3?.stop();
  });

  const cases = () => [
    { path: '/api/images/img-abc-123.png', body: image, type: 'image/png' },
    { path: '/api/videos/job-xyz-9.mp4', body: video, type: 'video/mp4' },
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
