import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { errorCodes, httpStatusOf } from '@switchboard/errors';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { repoRoot } from '../support/gateway.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

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

test('400 invalid_json for a malformed body', async () => {
  await expectError(await post('/query', '{"prompt": '), 400, 'invalid_json');
});

test('400 invalid_request naming the field: wrong type, out of range, missing', async () => {
  await expectError(await post('/query', JSON.stringify({ prompt: 5 })), 400, 'invalid_request', 'prompt');
  await expectError(await post('/query', JSON.stringify({ prompt: '' })), 400, 'invalid_request', 'prompt');
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', temperature: 2.1 })),
    400,
    'invalid_request',
    'temperature',
  );
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', temperature: -0.1 })),
    400,
    'invalid_request',
    'temperature',
  );
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', max_tokens: 0 })),
    400,
    'invalid_request',
    'max_tokens',
  );
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] })),
    400,
    'invalid_request',
    'stop',
  );
  await expectError(await post('/query', JSON.stringify(['prompt'])), 400, 'invalid_request');
  await expectError(
    await post('/generate-image', JSON.stringify({ prompt: 'x', width: 100 })),
    400,
    'invalid_request',
    'width',
  );
  await expectError(
    await post('/generate-image', JSON.stringify({ prompt: 'x', steps: 101 })),
    400,
    'invalid_request',
    'steps',
  );
  await expectError(
    await post('/generate-image', JSON.stringify({ prompt: 'x', guidance_scale: 31 })),
    400,
    'invalid_request',
    'guidance_scale',
  );
  await expectError(
    await post('/api/browser/session/create', JSON.stringify({ viewport_width: 99 })),
    400,
    'invalid_request',
    'viewport_width',
  );
  await expectError(
    await post(
      '/animate',
      JSON.stringify({ backend: 'portrait', image: 'data:image/png;base64,AAAA' }),
      {},
      pro,
    ),
    400,
    'invalid_request',
    'driving_video',
  );
  await expectError(
    await post(
      '/animate',
      JSON.stringify({ backend: 'video-diffusion', image: 'https://example.com/a.png' }),
      {},
      pro,
    ),
    400,
    'invalid_request',
    'image',
  );
});

test('unknown JSON fields are ignored (then 503: no worker runs)', async () => {
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x', colour: 'blue' })),
    503,
    'unavailable',
  );
});

test('401 unauthorized and 403 ip_not_allowed / tier_required', async () => {
  await expectError(await fetch(`${stack.gateway.url}/query`, { method: 'POST' }), 401, 'unauthorized');
  await expectError(await post('/animate', '{}'), 403, 'tier_required');
  const fenced = await createKey(stack.gateway, { ip_allowlist: ['192.0.2.0/24'] });
  await expectError(
    await fetch(`${stack.gateway.url}/models`, { headers: bearer(fenced.key) }),
    403,
    'ip_not_allowed',
  );
});

test('404 not_found for unknown routes, session_not_found and job_not_found for bad ids', async () => {
  await expectError(await fetch(`${stack.gateway.url}/nope`, { headers: bearer(key.key) }), 404, 'not_found');
  await expectError(
    await fetch(`${stack.gateway.url}/query`, { headers: bearer(key.key) }),
    404,
    'not_found',
  );
  await expectError(
    await post('/api/browser/session/not-a-uuid/navigate', JSON.stringify({ url: 'http://x' })),
    404,
    'session_not_found',
  );
  await expectError(
    await fetch(`${stack.gateway.url}/animate/../../etc`, { headers: bearer(pro.key) }),
    404,
    'not_found',
  );
  await expectError(
    await fetch(`${stack.gateway.url}/animate/not-a-job`, { headers: bearer(pro.key) }),
    404,
    'job_not_found',
  );
});

test('413 payload_too_large over the route limit, and over the tier upload limit', async () => {
  await expectError(
    await post('/query', JSON.stringify({ prompt: 'x'.repeat(5000) })),
    413,
    'payload_too_large',
  );
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(10_000)]), 'big.wav');
  const res = await fetch(`${stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  await expectError(res, 413, 'payload_too_large');
});

test('415 unsupported_media_type for a JSON route sent something else, and vice versa', async () => {
  await expectError(
    await post('/query', 'prompt=x', { 'content-type': 'application/x-www-form-urlencoded' }),
    415,
    'unsupported_media_type',
  );
  await expectError(await post('/transcribe', '{}'), 415, 'unsupported_media_type');
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

test('malformed percent-encoding in a path is a JSON 400, not an HTML page', async () => {
  const res = await fetch(`${stack.gateway.url}/admin/api/keys/%E0%A4%A`, {
    headers: bearer(stack.gateway.adminToken),
  });
  await expectError(res, 400, 'invalid_request');
});

test('every error code is documented in the README and the OpenAPI document', async () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const openapi = await (await fetch(`${stack.gateway.url}/openapi.json`)).text();
  for (const code of errorCodes) {
    assert.ok(readme.includes(`\`${code}\``), `README documents ${code}`);
    assert.ok(openapi.includes(`"${code}"`), `OpenAPI documents ${code}`);
  }
  const apiMd = join(repoRoot, '..', 'shared', 'API.md');
  let contract = '';
  try {
    contract = readFileSync(apiMd, 'utf8');
  } catch {
    return; // the shared contract sits beside the clone in CI and on developer machines
  }
  const table = contract.slice(
    contract.indexOf('| status | codes |'),
    contract.indexOf('Unknown JSON fields'),
  );
  const documented = [...table.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
  assert.deepEqual(
    [...new Set(documented)].sort(),
    [...errorCodes].sort(),
    'the error table matches API.md §1 exactly',
  );
});
