import { test } from 'node:test';
import { EventEmitter } from 'node:events';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { natsProbe, objectStoreProbe, redisProbe, startDependencyProbes } from './dependency-health.js';

async function upValues(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('switchboard_dependency_up');
  assert.ok(metric, 'switchboard_dependency_up is registered');
  const values: Record<string, number> = {};
  for (const { labels, value } of (await metric.get()).values) values[String(labels.dependency)] = value;
  return values;
}

async function checkCounts(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('switchboard_dependency_check_seconds');
  assert.ok(metric, 'switchboard_dependency_check_seconds is registered');
  const counts: Record<string, number> = {};
  for (const entry of (await metric.get()).values) {
    const name = (entry as { metricName?: string }).metricName;
    if (name === 'switchboard_dependency_check_seconds_count')
      counts[String(entry.labels.dependency)] = entry.value;
  }
  return counts;
}

test('a dependency that answers is 1; one that fails, throws or hangs past the timeout is 0', async () => {
  const registry = new Registry();
  const probes = startDependencyProbes(
    registry,
    [
      { dependency: 'answers', check: async () => 'PONG' },
      { dependency: 'fails', check: () => Promise.reject(new Error('refused')) },
      {
        dependency: 'throws',
        check: () => {
          throw new Error('synchronous');
        },
      },
      { dependency: 'hangs', check: () => new Promise(() => undefined) },
    ],
    { intervalMs: 60_000, timeoutMs: 50 },
  );
  try {
    await probes.checkNow();
    assert.deepEqual(await upValues(registry), { answers: 1, fails: 0, throws: 0, hangs: 0 });
    const counts = await checkCounts(registry);
    for (const dependency of ['answers', 'fails', 'throws', 'hangs']) {
      assert.ok((counts[dependency] ?? 0) >= 1, `${dependency}'s check was timed`);
    }
  } finally {
    probes.close();
  }
});

test('the gauge follows the dependency: down, then up again', async () => {
  const registry = new Registry();
  let reachable = false;
  const probes = startDependencyProbes(
    registry,
    [{ dependency: 'nats', check: async () => (reachable ? undefined : Promise.reject(new Error('down'))) }],
    { intervalMs: 60_000, timeoutMs: 1_000 },
  );
  try {
    await probes.checkNow();
    assert.deepEqual(await upValues(registry), { nats: 0 });
    reachable = true;
    await probes.checkNow();
    assert.deepEqual(await upValues(registry), { nats: 1 });
  } finally {
    probes.close();
  }
});

test('every probe is listed (as 0) before its first answer, so alerts see a series at once', async () => {
  const registry = new Registry();
  const probes = startDependencyProbes(
    registry,
    [{ dependency: 'redis', check: () => new Promise(() => undefined) }],
    {
      intervalMs: 60_000,
      timeoutMs: 60_000,
    },
  );
  probes.close();
  assert.deepEqual(await upValues(registry), { redis: 0 });
});

test('two probe sets share one registry', async () => {
  const registry = new Registry();
  const a = startDependencyProbes(registry, [{ dependency: 'nats', check: async () => undefined }]);
  const b = startDependencyProbes(registry, [{ dependency: 's3', check: async () => undefined }]);
  try {
    await Promise.all([a.checkNow(), b.checkNow()]);
    assert.deepEqual(await upValues(registry), { nats: 1, s3: 1 });
  } finally {
    a.close();
    b.close();
  }
});

test('the client probes ask NATS for a round trip, Redis for PING and the store for a HEAD', async () => {
  let flushed = 0;
  let closed = false;
  const nats = natsProbe({ isClosed: () => closed, flush: async () => void flushed++ });
  assert.equal(nats.dependency, 'nats');
  await nats.check();
  assert.equal(flushed, 1);
  closed = true;
  await assert.rejects(nats.check(), /closed/);
  assert.equal(flushed, 1, 'a closed connection is not asked');

  const redis = redisProbe({ ping: async () => 'PONG' });
  assert.equal(redis.dependency, 'redis');
  assert.equal(await redis.check(), 'PONG');

  const heads: string[] = [];
  const s3 = objectStoreProbe({
    stat: async (key) => {
      heads.push(key);
      return null;
    },
  });
  assert.equal(s3.dependency, 's3');
  await s3.check();
  assert.equal(heads.length, 1);
});

test('the Redis probe waits for a client still making its first connection instead of failing at once', async () => {
  const client = Object.assign(new EventEmitter(), {
    status: 'connecting',
    ping: async () => {
      if (client.status !== 'ready')
        throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      return 'PONG';
    },
  });
  const registry = new Registry();
  const probes = startDependencyProbes(registry, [redisProbe(client)], { intervalMs: 60_000 });
  setTimeout(() => {
    client.status = 'ready';
    client.emit('ready');
  }, 20);
  await probes.checkNow();
  assert.deepEqual(await upValues(registry), { redis: 1 });
  probes.close();
});
