import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { startRedis, type RedisHandle } from '@switchboard/devcluster';
import { createRedisClient } from './client.js';
import { createRateLimiter, type RateLimiter, type RateLimitResult } from './limiter.js';

let redis: RedisHandle;
const clients: Redis[] = [];
let prefixCount = 0;

before(async () => {
  redis = await startRedis();
});

after(async () => {
  for (const client of clients) client.disconnect();
  await redis.stop();
});

/** Connected as the gateway, whose ACL allows only keys under `sb:`. */
async function client(server: RedisHandle = redis): Promise<Redis> {
  const { user, password } = server.credentials('gateway');
  const c = createRedisClient(server.url, { username: user, password });
  clients.push(c);
  if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve));
  return c;
}

/** Two limiters on two clients, as two gateway replicas would have; a fresh prefix per test. */
async function replicas(count: number, server?: RedisHandle): Promise<RateLimiter[]> {
  const keyPrefix = `sb:rl-test-${++prefixCount}`;
  const out: RateLimiter[] = [];
  for (let i = 0; i < count; i++) out.push(createRateLimiter({ redis: await client(server), keyPrefix }));
  return out;
}

async function eventually(check: () => boolean | Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('two replicas on one Redis admit exactly the limit in total', async () => {
  const [a, b] = await replicas(2);
  const results: RateLimitResult[] = [];
  // Concurrent, interleaved: the count is atomic in Redis, not per replica.
  const calls = Array.from({ length: 25 }, (_, i) => (i % 2 === 0 ? a! : b!).consume('key-1', 10));
  results.push(...(await Promise.all(calls)));
  assert.equal(results.filter((r) => r.allowed).length, 10);
  assert.equal(a!.degraded, false);
  assert.equal(b!.storeHealthy(), true);

  const remaining = results
    .filter((r) => r.allowed)
    .map((r) => r.remaining)
    .sort((x, y) => y - x);
  assert.deepEqual(remaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  for (const r of results) {
    assert.equal(r.limit, 10);
    assert.ok(r.resetSeconds >= 1 && r.resetSeconds <= 60, `resetSeconds ${r.resetSeconds}`);
    if (!r.allowed) assert.equal(r.remaining, 0);
  }
});

test('sequential consumes count down and share one window', async () => {
  const [a, b] = await replicas(2);
  const first = await a!.consume('key-seq', 3);
  assert.deepEqual(
    { ...first, resetSeconds: undefined },
    { allowed: true, limit: 3, remaining: 2, resetSeconds: undefined },
  );
  assert.equal(first.resetSeconds, 60);
  assert.equal((await b!.consume('key-seq', 3)).remaining, 1);
  assert.equal((await a!.consume('key-seq', 3)).remaining, 0);
  const limited = await b!.consume('key-seq', 3);
  assert.equal(limited.allowed, false);
  assert.ok(limited.resetSeconds >= 1 && limited.resetSeconds <= first.resetSeconds);
});

test('different subjects are independent', async () => {
  const [a] = await replicas(1);
  for (let i = 0; i < 2; i++) assert.equal((await a!.consume('subject-a', 2)).allowed, true);
  assert.equal((await a!.consume('subject-a', 2)).allowed, false);
  assert.equal((await a!.consume('subject-b', 2)).allowed, true);
});

test('per-key limit overrides use their own limit value', async () => {
  const [a, b] = await replicas(2);
  let admittedSmall = 0;
  let admittedLarge = 0;
  for (let i = 0; i < 8; i++) {
    if ((await a!.consume('override-small', 3)).allowed) admittedSmall++;
    if ((await b!.consume('override-large', 6)).allowed) admittedLarge++;
  }
  assert.equal(admittedSmall, 3);
  assert.equal(admittedLarge, 6);
  // Raising the override keeps the count already spent in this window.
  const raised = await a!.consume('override-small', 20);
  assert.equal(raised.allowed, true);
  assert.equal(raised.remaining, 20 - 9);
  await assert.rejects(a!.consume('x', 0), RangeError);
});

test('Redis killed: answers keep coming from memory, promptly; restart clears degraded', async () => {
  const own = await startRedis();
  try {
    const [a, b] = await replicas(2, own);
    assert.equal((await a!.consume('outage', 5)).allowed, true);
    assert.equal(a!.degraded, false);

    await own.kill();
    const started = Date.now();
    const during: RateLimitResult[] = [];
    for (let i = 0; i < 7; i++) during.push(await a!.consume('outage', 5));
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms while Redis is down`);
    assert.equal(a!.degraded, true);
    assert.equal(a!.storeHealthy(), false);
    // Per-process fallback: this replica alone admits up to the limit.
    assert.equal(during.filter((r) => r.allowed).length, 5);
    assert.equal((await a!.consume('outage', 5)).allowed, false);
    assert.equal(
      (await b!.consume('outage', 5)).allowed,
      true,
      'the other replica counts on its own meanwhile',
    );
    assert.equal(b!.degraded, true);

    await own.restart();
    await eventually(async () => {
      await a!.consume('after', 100);
      return !a!.degraded;
    }, 5000);
    await eventually(() => !b!.degraded, 5000);
    // Shared again: both replicas count against one Redis counter.
    assert.equal((await a!.consume('shared-again', 2)).remaining, 1);
    assert.equal((await b!.consume('shared-again', 2)).remaining, 0);
    assert.equal((await a!.consume('shared-again', 2)).allowed, false);
  } finally {
    await own.stop();
  }
});

test('Redis hung (paused): calls time out quickly into the fallback, and recover on resume', async () => {
  const own = await startRedis();
  try {
    const [a] = await replicas(1, own);
    assert.equal((await a!.consume('hung', 50)).allowed, true);
    own.pause();
    const started = Date.now();
    const result = await a!.consume('hung', 50);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms while Redis is paused`);
    assert.equal(result.allowed, true);
    assert.equal(a!.degraded, true);
    // Within the retry interval the store is not tried again: no further waiting.
    const quick = Date.now();
    await a!.consume('hung', 50);
    assert.ok(Date.now() - quick < 100);

    own.resume();
    await eventually(async () => {
      await a!.consume('hung-after', 50);
      return !a!.degraded;
    }, 5000);
  } finally {
    await own.stop();
  }
});

test('a limiter whose Redis never came up still answers', async () => {
  const { freePort } = await import('@switchboard/devcluster');
  const c = createRedisClient(`redis://127.0.0.1:${await freePort()}`);
  clients.push(c);
  const limiter = createRateLimiter({ redis: c, keyPrefix: 'nowhere' });
  const started = Date.now();
  const results = await Promise.all([1, 2, 3].map(() => limiter.consume('k', 2)));
  assert.ok(Date.now() - started < 200);
  assert.deepEqual(
    results.map((r) => r.allowed),
    [true, true, false],
  );
  assert.equal(limiter.degraded, true);
  limiter.close();
});
