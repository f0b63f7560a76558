import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
let key: CreatedKey;

before(async () => {
  stack = await startStack();
  key = await createKey(stack.gateway, { name: 'auth-matrix' });
});
after(() => stack?.stop());

const models = (headers: Record<string, string> = {}, query = '') =>
  fetch(`${stack.gateway.url}/models${query}`, { headers });

test('a valid key passes and gets rate-limit headers', async () => {
  const res = await models(bearer(key.key));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { data: [] });
  assert.match(res.headers.get('ratelimit-policy') ?? '', /^"default";q=60;w=60$/);
  assert.match(res.headers.get('ratelimit') ?? '', /^"default";r=\d+;t=\d+$/);
});

test('missing, malformed, unknown and wrong-secret keys are 401 with the error shape', async () => {
  const [, id] = /^sb_([^_]+)_/.exec(key.key) ?? [];
  const cases: Record<string, Record<string, string>> = {
    missing: {},
    'not bearer': { authorization: `Basic ${key.key}` },
    'empty bearer': { authorization: 'Bearer ' },
    malformed: { authorization: 'Bearer not-a-key' },
    unknown: { authorization: `Bearer sb_zzzzzzzzzzzz_${'a'.repeat(33)}` },
    'wrong secret': { authorization: `Bearer sb_${id}_${'b'.repeat(33)}` },
    'two tokens': { authorization: `Bearer ${key.key} ${key.key}` },
  };
  for (const [name, headers] of Object.entries(cases)) {
    const res = await models(headers);
    assert.equal(res.status, 401, name);
    const error = await errorOf(res);
    assert.equal(error.code, 'unauthorized', name);
    assert.equal(res.headers.get('ratelimit'), null, `${name}: 401 carries no key quota`);
  }
});

test('a key in the query string is never accepted', async () => {
  for (const query of [`?api_key=${key.key}`, `?key=${key.key}`, `?access_token=${key.key}`]) {
    const res = await models({}, query);
    assert.equal(res.status, 401);
    assert.equal((await errorOf(res)).code, 'unauthorized');
  }
});

test('a revoked key is refused', async () => {
  const revoked = await createKey(stack.gateway, { name: 'to-revoke' });
  assert.equal((await models(bearer(revoked.key))).status, 200);
  assert.equal((await admin(stack.gateway, 'DELETE', `/keys/${revoked.id}`)).status, 204);
  let status = 0;
  for (let i = 0; i < 20 && status !== 401; i += 1) {
    status = (await models(bearer(revoked.key))).status;
    if (status !== 401) await sleep(100);
  }
  assert.equal(status, 401);
});

test('a rotated-out secret is refused at once with no grace', async () => {
  const rotating = await createKey(stack.gateway, { name: 'to-rotate' });
  const res = await admin(stack.gateway, 'POST', `/keys/${rotating.id}/rotate`, {});
  assert.equal(res.status, 200);
  const { key: fresh } = (await res.json()) as { key: string };
  await sleep(300); // the gateway's own view follows its KV watch
  assert.equal((await models(bearer(rotating.key))).status, 401);
  assert.equal((await models(bearer(fresh))).status, 200);
});

test('request ids: a well-formed one is echoed, anything else replaced by a UUID', async () => {
  const echoed = await models({ ...bearer(key.key), 'x-request-id': 'client-req-12345' });
  assert.equal(echoed.headers.get('x-request-id'), 'client-req-12345');
  const replaced = await models({ ...bearer(key.key), 'x-request-id': 'bad id with spaces' });
  assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const fresh = await fetch(`${stack.gateway.url}/healthz`);
  assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('failed authentication is limited per client IP, not per key', async () => {
  // AUTH_FAILURES_PER_MINUTE defaults to 30; earlier tests spent some of this IP's budget.
  let limited: Response | undefined;
  for (let i = 0; i < 40 && !limited; i += 1) {
    const res = await models({ authorization: 'Bearer sb_nope_nope' });
    if (res.status === 429) limited = res;
    else assert.equal(res.status, 401);
  }
  assert.ok(limited, 'expected 429 after repeated failures');
  assert.equal((await errorOf(limited)).code, 'rate_limited');
  assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
});
