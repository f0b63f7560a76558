import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack({ gateways: 2 });
});
after(() => stack?.stop());

function parseRateLimit(res: Response) {
  const policy = /^"default";q=(\d+);w=60$/.exec(res.headers.get('ratelimit-policy') ?? '');
  const state = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '');
  assert.ok(policy && state, `rate-limit headers on ${res.status}`);
  return { limit: Number(policy[1]), remaining: Number(state[1]), reset: Number(state[2]) };
}

test('two gateway replicas share one key limit through Redis', async () => {
  const limit = 10;
  const key = await createKey(stack.gateway, { rate_limit_per_minute: limit });
  await sleep(300); // the second replica sees the key through its KV watch
  let ok = 0;
  let limited: Response | undefined;
  const remainders: number[] = [];
  for (let i = 0; i < 2 * limit; i += 1) {
    const gateway = stack.gateways[i % 2]!;
    const res = await fetch(`${gateway.url}/models`, { headers: bearer(key.key) });
    const state = parseRateLimit(res);
    assert.equal(state.limit, limit);
    assert.ok(state.reset >= 1 && state.reset <= 60, `reset ${state.reset}`);
    if (res.status === 200) {
      ok += 1;
      remainders.push(state.remaining);
      await res.arrayBuffer();
    } else {
      assert.equal(res.status, 429);
      assert.equal(state.remaining, 0);
      limited ??= res;
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        `Retry-After ${retryAfter}`,
      );
      assert.ok(Math.abs(retryAfter - state.reset) <= 1, 'Retry-After agrees with RateLimit t=');
    }
  }
  assert.equal(ok, limit, 'exactly the limit is admitted across both replicas');
  assert.deepEqual(
    remainders,
    Array.from({ length: limit }, (_, i) => limit - 1 - i),
    'remaining counts down across replicas',
  );
  assert.ok(limited);
  assert.equal((await errorOf(limited)).code, 'rate_limited');
});

test("a key's own limit overrides the tier's, and keys do not share a budget", async () => {
  const small = await createKey(stack.gateway, { rate_limit_per_minute: 2 });
  const other = await createKey(stack.gateway, { tier: 'basic' });
  const hit = (key: string) => fetch(`${stack.gateway.url}/models`, { headers: bearer(key) });
  assert.equal((await hit(small.key)).status, 200);
  assert.equal((await hit(small.key)).status, 200);
  assert.equal((await hit(small.key)).status, 429);
  const res = await hit(other.key);
  assert.equal(res.status, 200);
  assert.equal(parseRateLimit(res).limit, 60);
});

test('with Redis down the gateway keeps serving, per process, and says so', async () => {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 3 });
  await stack.redis.kill();
  try {
    const started = Date.now();
    const res = await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
    assert.equal(res.status, 200);
    assert.ok(Date.now() - started < 3000, 'no hang on a dead Redis');
    // The per-process fallback still limits.
    assert.equal((await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) })).status, 200);
    assert.equal((await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) })).status, 200);
    assert.equal((await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) })).status, 429);

    const ready = await fetch(`${stack.gateway.url}/readyz`);
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    assert.equal(body.status, 'degraded');
    let metrics = '';
    for (let i = 0; i < 30 && !/switchboard_rate_limit_store_degraded\{[^}]*\} 1/.test(metrics); i += 1) {
      await sleep(100);
      metrics = await (await fetch(stack.gateway.metricsUrl)).text();
    }
    assert.match(metrics, /switchboard_rate_limit_store_degraded\{[^}]*\} 1/);
  } finally {
    await stack.redis.restart();
  }
  let status = '';
  for (let i = 0; i < 100 && status !== 'ready'; i += 1) {
    await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
    status = ((await (await fetch(`${stack.gateway.url}/readyz`)).json()) as { status: string }).status;
    if (status !== 'ready') await sleep(100);
  }
  assert.equal(status, 'ready', 'recovers when Redis is back');
});
