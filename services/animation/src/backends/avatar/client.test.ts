// The client's retry and failure rules against a scripted `fetch` (no server, no vendor): what is
// retried and what is not, Retry-After, the deadline, per-request timeouts, the key on every API
// call but never on the result download, and a cancel that ends a wait at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { PermanentJobError } from '../backend.js';
import { DidClient, type CallContext } from './client.js';
import type { VendorErrorKind } from './errors.js';

const KEY = 'dGVzdEBleGFtcGxlLmNvbQ:s3cr3t-key';
const logger = createLogger({ service: 'test', level: 'silent' });

interface Seen {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
}

type Step = Response | Error | 'hang';

/** A fetch that answers from `steps` in order (the last one repeats) and records each call. */
function scripted(steps: Step[]) {
  const seen: Seen[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push({
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      body: init?.body,
    });
    const step = steps[Math.min(seen.length - 1, steps.length - 1)];
    if (step === 'hang') {
      // Like a real socket, an unanswered request holds the event loop open until it is aborted.
      return new Promise<Response>((_resolve, reject) => {
        const socket = setInterval(() => undefined, 1000);
        init?.signal?.addEventListener(
          'abort',
          () => {
            clearInterval(socket);
            reject(init.signal?.reason as Error);
          },
          { once: true },
        );
      });
    }
    if (step instanceof Error) throw step;
    if (!step) return Response.error();
    // A fresh copy each time (not a tee'd clone, whose cancel would wait on the unread original).
    const bytes = await step.clone().arrayBuffer();
    return new Response(bytes, { status: step.status, headers: step.headers });
  }) as typeof fetch;
  return { fetchFn, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function client(
  fetchFn: typeof fetch,
  kinds: VendorErrorKind[] = [],
  overrides: { requestTimeoutMs?: number } = {},
) {
  return new DidClient({
    baseUrl: 'https://vendor.test/v1',
    apiKey: KEY,
    requestTimeoutMs: overrides.requestTimeoutMs ?? 5_000,
    retry: { baseMs: 10, maxMs: 40 },
    fetch: fetchFn,
    onVendorError: (kind) => kinds.push(kind),
    maxResultBytes: 1024,
  });
}

const context = (deadlineMs = 5_000, signal = new AbortController().signal): CallContext => ({
  signal,
  deadline: Date.now() + deadlineMs,
  logger,
});

const permanent = (code: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof PermanentJobError, String(error));
  assert.equal(error.code, code);
  if (pattern) assert.match(error.message, pattern);
  assert.ok(!error.message.includes(KEY), 'the key must never be in a message');
  return true;
};

test('uploads are multipart under the documented field, with Basic auth, under the base path', async () => {
  const { fetchFn, seen } = scripted([
    json(201, { id: 'img1', url: 's3://d-id-images-prod/u/img1/image.png' }),
  ]);
  const upload = await client(fetchFn).uploadImage(Buffer.from('png'), 'image.png', 'image/png', context());
  assert.deepEqual(upload, { id: 'img1', url: 's3://d-id-images-prod/u/img1/image.png' });
  const call = seen[0];
  assert.ok(call);
  assert.equal(call.url, 'https://vendor.test/v1/images');
  assert.equal(call.method, 'POST');
  assert.equal(call.headers.get('authorization'), `Basic ${KEY}`);
  assert.ok(call.body instanceof FormData);
  const part = call.body.get('image');
  assert.ok(part instanceof Blob);
  assert.equal(part.type, 'image/png');
  assert.equal((part as File).name, 'image.png');
});

test('the talk is created with a JSON body and read back by id', async () => {
  const { fetchFn, seen } = scripted([
    json(201, { id: 'tlk_a/b', status: 'created' }),
    json(200, { id: 'tlk_a/b', status: 'started' }),
  ]);
  const did = client(fetchFn);
  const body = {
    source_url: 's3://i',
    script: { type: 'audio', audio_url: 's3://a' },
    config: { result_format: 'mp4', stitch: true },
  } as const;
  assert.deepEqual(await did.createTalk(body, context()), { id: 'tlk_a/b' });
  assert.deepEqual(await did.getTalk('tlk_a/b', context()), { status: 'started' });
  assert.equal(seen[0]?.headers.get('content-type'), 'application/json');
  assert.deepEqual(JSON.parse(String(seen[0]?.body)), body);
  assert.equal(seen[1]?.url, 'https://vendor.test/v1/talks/tlk_a%2Fb');
  assert.equal(seen[1]?.headers.get('authorization'), `Basic ${KEY}`);
});

test('429, 5xx, network errors and timeouts are retried; each is counted', async () => {
  const kinds: VendorErrorKind[] = [];
  const { fetchFn, seen } = scripted([
    json(429, { kind: 'TooManyRequests', description: 'slow down' }),
    json(503, { kind: 'ServiceUnavailable' }),
    new TypeError('fetch failed'),
    'hang',
    json(200, { status: 'created' }),
  ]);
  const talk = await client(fetchFn, kinds, { requestTimeoutMs: 100 }).getTalk('tlk_1', context());
  assert.deepEqual(talk, { status: 'created' });
  assert.equal(seen.length, 5);
  assert.deepEqual(kinds, ['rate_limited', 'server_error', 'network', 'timeout']);
});

test('Retry-After is honoured over the backoff, and one past the deadline fails at once', async () => {
  const { fetchFn } = scripted([json(429, {}, { 'retry-after': '1' }), json(200, { status: 'started' })]);
  let started = Date.now();
  await client(fetchFn).getTalk('tlk_1', context());
  assert.ok(Date.now() - started >= 950, 'waited for Retry-After');

  const kinds: VendorErrorKind[] = [];
  const late = scripted([json(429, {}, { 'retry-after': '30' })]);
  started = Date.now();
  await assert.rejects(
    client(late.fetchFn, kinds).getTalk('tlk_1', context(2_000)),
    permanent('upstream_timeout', /429/),
  );
  assert.ok(Date.now() - started < 500, 'did not sleep towards a deadline it cannot meet');
  assert.deepEqual(kinds, ['rate_limited', 'deadline']);
});

test('transient failures until the deadline end in upstream_timeout', async () => {
  const { fetchFn, seen } = scripted([json(500, { kind: 'InternalServerError' })]);
  const started = Date.now();
  await assert.rejects(
    client(fetchFn).getTalk('tlk_1', context(300)),
    permanent('upstream_timeout', /deadline/),
  );
  assert.ok(Date.now() - started < 600);
  assert.ok(seen.length >= 3, `retried (${seen.length} calls)`);
});

test('401, 403, 400 and 402 fail at once as upstream_failed, naming the vendor kind and not the key', async () => {
  for (const [status, kind] of [
    [401, 'AuthorizationError'],
    [403, 'PermissionError'],
    [400, 'ValidationError'],
    [402, 'InsufficientCreditsError'],
  ] as const) {
    const { fetchFn, seen } = scripted([json(status, { kind, description: `echo ${KEY}`, details: {} })]);
    await assert.rejects(
      client(fetchFn).createTalk(
        {
          source_url: 's3://i',
          script: { type: 'audio', audio_url: 's3://a' },
          config: { result_format: 'mp4', stitch: true },
        },
        context(),
      ),
      permanent('upstream_failed', new RegExp(`${status} ${kind}`)),
    );
    assert.equal(seen.length, 1, `${status} is not retried`);
  }
});

test('a 2xx answer of the wrong shape is a vendor fault, not retried', async () => {
  const kinds: VendorErrorKind[] = [];
  const { fetchFn, seen } = scripted([new Response('<html>', { status: 200 })]);
  await assert.rejects(
    client(fetchFn, kinds).getTalk('tlk_1', context()),
    permanent('upstream_failed', /not JSON/),
  );
  assert.equal(seen.length, 1);
  assert.deepEqual(kinds, ['bad_response']);
});

test('the result download carries no key, refuses odd schemes and oversized videos', async () => {
  const { fetchFn, seen } = scripted([new Response(new Uint8Array(100), { status: 200 })]);
  const dir = await import('node:fs/promises').then(({ mkdtemp }) => mkdtemp('/tmp/avatar-client-'));
  await client(fetchFn).download('https://bucket.test/r.mp4?Signature=x', `${dir}/r.mp4`, context());
  assert.equal(seen[0]?.headers.get('authorization'), null);

  await assert.rejects(
    async () => client(fetchFn).download('file:///etc/passwd', `${dir}/x`, context()),
    permanent('upstream_failed'),
  );
  const big = scripted([new Response(new Uint8Array(4096), { status: 200 })]);
  await assert.rejects(
    client(big.fetchFn).download('https://bucket.test/r.mp4', `${dir}/big.mp4`, context()),
    permanent('upstream_failed', /exceeds/),
  );
  await import('node:fs/promises').then(({ rm }) => rm(dir, { recursive: true, force: true }));
});

test('a cancel ends a request or a retry wait at once with the signal reason', async () => {
  const reason = new Error('job canceled');
  for (const steps of [['hang'], [json(503, {}, { 'retry-after': '60' })]] as Step[][]) {
    const controller = new AbortController();
    const { fetchFn } = scripted(steps);
    const call = client(fetchFn).getTalk('tlk_1', context(120_000, controller.signal));
    setTimeout(() => controller.abort(reason), 50);
    const started = Date.now();
    await assert.rejects(call, (error) => error === reason);
    assert.ok(Date.now() - started < 500);
  }
});
