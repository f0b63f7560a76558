// switchboard_dependency_up against real brokers and a real S3 server: 1 while each answers, 0
// once it is stopped or frozen, 1 again after it is back, with the clients the services use.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { startNats, startRedis, type NatsHandle, type RedisHandle } from '@switchboard/devcluster';
import { S3ObjectStore } from '@switchboard/objectstore';
import {
  createRegistry,
  natsProbe,
  objectStoreProbe,
  redisProbe,
  startDependencyProbes,
  type DependencyProbes,
} from '@switchboard/telemetry';
import { startS3, type S3Server } from '../support/s3.js';

type Registry = ReturnType<typeof createRegistry>;

let nats: NatsHandle;
let redis: RedisHandle;
let nc: NatsConnection;
let redisClient: Redis;

before(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
  nc = await connect({ ...nats.connectOptions('gateway'), maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const { user, password } = redis.credentials('gateway');
  // As the gateway's client: commands fail at once while disconnected, reconnects keep trying.
  redisClient = new Redis(redis.url, {
    username: user,
    password,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    retryStrategy: () => 100,
  });
  redisClient.on('error', () => undefined); // connection errors are what this test causes
});

after(async () => {
  await nc?.close();
  redisClient?.disconnect();
  await Promise.all([nats?.stop(), redis?.stop()]);
});

async function up(registry: Registry): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  const text = await registry.metrics();
  for (const [, labels, value] of text.matchAll(/^switchboard_dependency_up\{([^}]*)\} (\d)$/gm)) {
    const dependency = /dependency="(\w+)"/.exec(labels!)?.[1];
    if (dependency) values[dependency] = Number(value);
  }
  return values;
}

/** Rounds of checks until `expected` holds or 20 s pass (a restarted broker takes a moment). */
async function settlesTo(probes: DependencyProbes, registry: Registry, expected: Record<string, number>) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await probes.checkNow();
    const seen = await up(registry);
    if (JSON.stringify(seen) === JSON.stringify(expected) || Date.now() > deadline) {
      assert.deepEqual(seen, expected);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('NATS and Redis: 1 while running, 0 when stopped or frozen, 1 again once back', async () => {
  const registry = createRegistry('gateway');
  const probes = startDependencyProbes(registry, [natsProbe(nc), redisProbe(redisClient)], {
    intervalMs: 60_000,
    timeoutMs: 1_000,
  });
  try {
    await settlesTo(probes, registry, { nats: 1, redis: 1 });

    await Promise.all([nats.kill(), redis.kill()]);
    await settlesTo(probes, registry, { nats: 0, redis: 0 });

    await Promise.all([nats.restart(), redis.restart()]);
    await settlesTo(probes, registry, { nats: 1, redis: 1 });

    // A frozen server keeps its sockets open and answers nothing: the check's timeout says 0.
    nats.pause();
    redis.pause();
    try {
      await settlesTo(probes, registry, { nats: 0, redis: 0 });
    } finally {
      nats.resume();
      redis.resume();
    }
    await settlesTo(probes, registry, { nats: 1, redis: 1 });
    assert.match(
      await registry.metrics(),
      /^switchboard_dependency_check_seconds_count\{[^}]*dependency="redis"/m,
    );
  } finally {
    probes.close();
  }
});

test('S3: 1 while the server answers a HEAD, 0 once it is gone', async () => {
  let s3: S3Server | undefined = await startS3();
  try {
    const store = new S3ObjectStore({
      endpoint: s3.endpoint,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      bucket: 'probe-test',
      region: s3.region,
      retentionDays: {},
    });
    await store.ensureReady();
    const registry = createRegistry('browser');
    const probes = startDependencyProbes(registry, [objectStoreProbe(store)], {
      intervalMs: 60_000,
      timeoutMs: 2_000,
    });
    try {
      await settlesTo(probes, registry, { s3: 1 });
      assert.ok(s3.requests.some((request) => request.startsWith('HEAD /probe-test/health/probe')));
      await s3.stop();
      s3 = undefined;
      await settlesTo(probes, registry, { s3: 0 });
    } finally {
      probes.close();
    }
  } finally {
    await s3?.stop();
  }
});
