// Call places shared by gateway replicas through a real Redis, connected as the gateway user.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { startRedis, type RedisHandle } from '@switchboard/devcluster';
import { createRedisClient } from './client.js';
import { createConcurrencyLimiter, type CallSlot, type ConcurrencyLimiter } from './concurrency.js';

let redis: RedisHandle;
const clients: Redis[] = [];
const limiters: ConcurrencyLimiter[] = [];
let prefixCount = 0;

before(async () => {
  redis = await startRedis();
});

after(async () => {
  for (const limiter of limiters) limiter.close();
  for (const client of clients) client.disconnect();
  await redis.stop();
});

async function client(server: RedisHandle): Promise<Redis> {
  const { user, password } = server.credentials('gateway');
  const c = createRedisClient(server.url, { username: user, password });
  clients.push(c);
  if (c.status !== 'ready') await new Promise((resolve) => c.once('ready', resolve));
  return c;
}

/** Limiters on clients of their own, as gateway replicas have; a fresh prefix per test. */
async function replicas(count: number, leaseMs?: number, server = redis): Promise<ConcurrencyLimiter[]> {
  const keyPrefix = `sb:calls-test-${++prefixCount}`;
  const out: ConcurrencyLimiter[] = [];
  for (let i = 0; i < count; i++) {
    out.push(createConcurrencyLimiter({ redis: await client(server), keyPrefix, leaseMs }));
  }
  limiters.push(...out);
  return out;
}

const granted = (slots: (CallSlot | null)[]) => slots.filter((s): s is CallSlot => s !== null);

test('two replicas hand out exactly the limit between them; a release frees one place, once', async () => {
  const [a, b] = await replicas(2);
  const slots = await Promise.all(
    Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a! : b!).acquire('key-1:llm', 3)),
  );
  const held = granted(slots);
  assert.equal(held.length, 3);
  assert.equal(a!.held('key-1:llm') + b!.held('key-1:llm'), 3);
  // Another subject (capability or key) has places of its own.
  assert.notEqual(await a!.acquire('key-1:diffusion', 3), null);
  assert.notEqual(await b!.acquire('key-2:llm', 3), null);

  held[0]!.release();
  held[0]!.release();
  await new Promise((r) => setTimeout(r, 50));
  const again = await Promise.all([a!.acquire('key-1:llm', 3), b!.acquire('key-1:llm', 3)]);
  assert.equal(granted(again).length, 1, 'a double release must not free two places');
});

test('a held place is renewed past its lease; a replica that dies holding one frees it when the lease lapses', async () => {
  const [a, b] = await replicas(2, 600);
  const slot = await a!.acquire('key-3:whisper', 1);
  assert.notEqual(slot, null);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await b!.acquire('key-3:whisper', 1), null, 'renewed while the call runs');
  // The replica stops renewing (as one that died would) without releasing.
  a!.close();
  await new Promise((r) => setTimeout(r, 900));
  assert.notEqual(await b!.acquire('key-3:whisper', 1), null, 'the lapsed lease no longer counts');
});

test('Redis down: each replica counts its own places, promptly; shared again once Redis is back', async () => {
  const own = await startRedis();
  try {
    const [a, b] = await replicas(2, undefined, own);
    const before = await a!.acquire('key-4:llm', 2);
    assert.notEqual(before, null);
    await own.kill();
    const started = Date.now();
    // The place taken through Redis still counts here: one more, then refused.
    assert.notEqual(await a!.acquire('key-4:llm', 2), null);
    assert.equal(await a!.acquire('key-4:llm', 2), null);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms while Redis is down`);
    assert.equal(
      granted(await Promise.all([b!.acquire('key-4:llm', 2), b!.acquire('key-4:llm', 2)])).length,
      2,
    );
    await own.restart();
    const deadline = Date.now() + 5000;
    while (
      (clients.at(-1)!.status !== 'ready' || clients.at(-2)!.status !== 'ready') &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // Redis restarted empty: the two places a still holds were renewed back or are local; a
    // fresh subject is shared again across the replicas.
    assert.notEqual(await a!.acquire('key-5:llm', 1), null);
    assert.equal(await b!.acquire('key-5:llm', 1), null);
  } finally {
    await own.stop();
  }
});
