// Security: the tier gate (and every other path-based policy) holds for every spelling of
// a path. A basic key tries /animate as an attacker would: other cases, trailing slashes,
// doubled slashes and percent-escapes. Each must be refused by the gate (403) or reach no handler
// (404) — never reach the animate handler, which would answer 400/202/503 from the route.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { rawRequest } from '../support/raw-http.js';
import { startStack, type Stack } from '../support/stack.js';

let stack: Stack;
let basic: CreatedKey;
let professional: CreatedKey;

before(async () => {
  stack = await startStack();
  basic = await createKey(stack.gateway, { tier: 'basic', rate_limit_per_minute: 10_000 });
  professional = await createKey(stack.gateway, { tier: 'professional', rate_limit_per_minute: 10_000 });
});
after(() => stack?.stop());

const submit = JSON.stringify({ backend: 'video-diffusion', image: 'data:image/png;base64,AAAA' });

const variants: [method: string, path: string][] = [
  ['POST', '/Animate'],
  ['POST', '/ANIMATE'],
  ['POST', '/animate/'],
  ['POST', '//animate'],
  ['POST', '/%61nimate'],
  ['POST', '/anim%41te'],
  ['GET', '/ANIMATE/job-1'],
  ['GET', '/Animate/job-1'],
  ['GET', '/animate/job-1/'],
  ['GET', '/animate//job-1'],
  ['GET', '/%61nimate/job-1'],
  ['GET', '/animate%2Fjob-1'],
  ['DELETE', '/aNiMaTe/job-1'],
  ['DELETE', '/animate/job-1/'],
];

const call = (key: CreatedKey, method: string, path: string) =>
  rawRequest(
    stack.gateway.url,
    method,
    path,
    { ...bearer(key.key), 'content-type': 'application/json' },
    method === 'POST' ? submit : undefined,
  );

test('a basic key reaches no /animate handler, whatever the spelling', async () => {
  const canonical = await call(basic, 'POST', '/animate');
  assert.equal(canonical.status, 403, canonical.body);
  assert.equal((JSON.parse(canonical.body) as { error: { code: string } }).error.code, 'tier_required');
  for (const [method, path] of variants) {
    const res = await call(basic, method, path);
    const code = (JSON.parse(res.body) as { error: { code: string } }).error.code;
    assert.ok(
      (res.status === 403 && code === 'tier_required') || (res.status === 404 && code === 'not_found'),
      `${method} ${path} → ${res.status} ${res.body}`,
    );
  }
});

test('routing is exact: other spellings are 404 for any key, the real path reaches its handler', async () => {
  for (const [method, path] of variants) {
    const res = await call(professional, method, path);
    assert.equal(res.status, 404, `${method} ${path} → ${res.status} ${res.body}`);
  }
  // The route itself answers: no such job (a path that reaches no route is `not_found`).
  const real = await call(professional, 'GET', '/animate/job-1');
  assert.equal(real.status, 404, real.body);
  assert.match(real.body, /"job_not_found"/);
  for (const path of ['/Models', '/models/', '/QUERY']) {
    const res = await rawRequest(stack.gateway.url, 'GET', path, bearer(basic.key));
    assert.equal(res.status, 404, `${path} → ${res.status}`);
  }
});

test('admin paths in other spellings never skip the admin token', async () => {
  for (const path of ['/ADMIN/api/keys', '/admin/API/keys', '/Admin/api/keys/', '/admin//api/keys']) {
    const anonymous = await rawRequest(stack.gateway.url, 'GET', path);
    assert.equal(anonymous.status, 401, `${path} without a token → ${anonymous.status}`);
    // An API key is no admin credential under any spelling.
    const withKey = await rawRequest(stack.gateway.url, 'GET', path, bearer(professional.key));
    assert.ok([401, 404].includes(withKey.status), `${path} with an API key → ${withKey.status}`);
    assert.ok(!withKey.body.includes('"data"'), `${path} listed keys to an API key`);
  }
});
