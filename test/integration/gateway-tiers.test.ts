import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack?.stop());

const png =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const animate = (key: string) =>
  fetch(`${stack.gateway.url}/animate`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ backend: 'video-diffusion', image: png }),
  });

test('a basic key on /animate is 403 tier_required, on every /animate path, without spending quota', async () => {
  const basic = await createKey(stack.gateway, { tier: 'basic', rate_limit_per_minute: 100 });
  const res = await animate(basic.key);
  assert.equal(res.status, 403);
  assert.equal((await errorOf(res)).code, 'tier_required');
  const status = await fetch(`${stack.gateway.url}/animate/job-abc`, { headers: bearer(basic.key) });
  assert.equal(status.status, 403);
  const spent = await fetch(`${stack.gateway.url}/models`, { headers: bearer(basic.key) });
  // The two 403s spent nothing: this first successful call leaves 99 of 100.
  assert.match(spent.headers.get('ratelimit') ?? '', /^"default";r=99;t=\d+$/);
});

test('professional and enterprise pass the gate: the job is accepted with no animation worker running', async () => {
  for (const tier of ['professional', 'enterprise']) {
    const key = await createKey(stack.gateway, { tier });
    const res = await animate(key.key);
    assert.equal(res.status, 202, `${tier}: ${await res.clone().text()}`);
    assert.equal(((await res.json()) as { status: string }).status, 'queued');
  }
});

test('tier defaults set the rate-limit policy', async () => {
  for (const [tier, limit] of [
    ['basic', 60],
    ['professional', 600],
    ['enterprise', 6000],
  ] as const) {
    const key = await createKey(stack.gateway, { tier });
    const res = await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
    assert.equal(res.headers.get('ratelimit-policy'), `"default";q=${limit};w=60`);
  }
});
