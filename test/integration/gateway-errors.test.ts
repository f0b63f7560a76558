import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errorCodes, httpStatusOf } from '@switchboard/errors';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

// What needs the stack: keys, rate limits, jobs, workers. The refusals answered before any of them
// is asked (validation, tiers, body limits, unknown routes) are checked in process, in
// services/gateway/src/http/routes.test.ts.

let stack: Stack;
let key: CreatedKey;
let pro: CreatedKey;
before(async () => {
  stack = await startStack({
    env: { JSON_BODY_LIMIT_BYTES: '2048', TIER_POLICIES: '{"basic":{"upload_limit_bytes":4096}}' },
  });
  key = await createKey(stack.gateway, { rate_limit_per_minute: 1000 });
  pro = await createKey(stack.gateway, { tier: 'professional' });
});
after(() => stack?.stop());

const post = (path: string, body: string | undefined, headers: Record<string, string> = {}, who = key) =>
  fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(who.key), 'content-type': 'application/json', ...headers },
    body,
  });

async function expectError(res: Response, status: number, code: string, param?: string) {
  assert.equal(res.status, status, `expected ${status} ${code}`);
  const error = await errorOf(res);
  assert.equal(error.code, code);
  if (param !== undefined) assert.equal(error.param, param);
  assert.equal(httpStatusOf(error.code as never), status, 'status agrees with the error table');
  return error;
}

test('unknown JSON fields are ignored (then 503: no worker runs)', async () => {
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', colour: 'blue' })),
    503,
    'unavailable',
  );
});

test('401 unauthorized and 403 ip_not_allowed', async () => {
  await expectError(await fetch(`${stack.gateway.url}/query`, { method: 'POST' }), 401, 'unauthorized');
  const fenced = await createKey(stack.gateway, { ip_allowlist: ['192.0.2.0/24'] });
  await expectError(
    await fetch(`${stack.gateway.url}/models`, { headers: bearer(fenced.key) }),
    403,
    'ip_not_allowed',
  );
});

test('404 job_not_found for an id that is no job', async () => {
  await expectError(
    await fetch(`${stack.gateway.url}/animate/not-a-job`, { headers: bearer(pro.key) }),
    404,
    'job_not_found',
  );
});

test('413 payload_too_large over the tier upload limit', async () => {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(10_000)]), 'big.wav');
  const res = await fetch(`${stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  await expectError(res, 413, 'payload_too_large');
});

test('429 rate_limited with Retry-After', async () => {
  const tight = await createKey(stack.gateway, { rate_limit_per_minute: 1 });
  await fetch(`${stack.gateway.url}/models`, { headers: bearer(tight.key) });
  const res = await fetch(`${stack.gateway.url}/models`, { headers: bearer(tight.key) });
  await expectError(res, 429, 'rate_limited');
  assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
});

test('503 unavailable, promptly, from every worker route while its worker is not running', async () => {
  const form = new FormData();
  form.append('format', 'srt');
  form.append('file', new Blob([new Uint8Array(100)]), 'a.wav');
  const calls: [string, () => Promise<Response>][] = [
    ['query', () => post('/query', JSON.stringify({ prompt: 'hi' }))],
    ['query stream', () => post('/query', JSON.stringify({ prompt: 'hi', stream: true }))],
    [
      'transcribe',
      () =>
        fetch(`${stack.gateway.url}/transcribe`, { method: 'POST', headers: bearer(key.key), body: form }),
    ],
    ['generate-image', () => post('/generate-image', JSON.stringify({ prompt: 'a cat' }))],
    // /animate needs no worker: jobs wait in JetStream (test/integration/animation-jobs.test.ts).
    // Session calls are answered from the session registry (an unknown id is 404 with or
    // without workers); creating one needs a worker.
    ['browser create', () => post('/api/browser/session/create', undefined, { 'content-type': '' })],
  ];
  for (const [name, call] of calls) {
    const started = Date.now();
    const res = await call();
    assert.equal(res.status, 503, name);
    const error = await errorOf(res);
    assert.equal(error.code, 'unavailable', name);
    assert.ok(
      !/127\.0\.0\.1|ECONNREFUSED|:\d{4,5}/.test(error.message),
      `${name}: no worker address leaks: ${error.message}`,
    );
    assert.ok(Date.now() - started < 5000, `${name} answered promptly`);
  }
});

// docs/api.md's table is compared with the code by libs/errors' documented-table test.
test('every error code is documented in the OpenAPI document', async () => {
  const openapi = await (await fetch(`${stack.gateway.url}/openapi.json`)).text();
  for (const code of errorCodes) {
    assert.ok(openapi.includes(`"${code}"`), `OpenAPI documents ${code}`);
  }
});
