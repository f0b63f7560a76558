// Each service's NATS and Redis users, tried as an attacker with a foothold in one pod would:
// without credentials nothing is served, and a service's credentials reach only what it needs
// (the key store is the gateway's alone). The permissions are the ones npm start and every
// test run with (libs/devcluster starts the brokers with @switchboard/broker-auth's tables).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { AckPolicy, connect, RetentionPolicy, StorageType, type NatsConnection } from 'nats';
import { defaultResources, natsRoles, type NatsRole } from '@switchboard/broker-auth';
import { CAPACITY_REFUSALS_BUCKET, SESSIONS_BUCKET, WORKERS_BUCKET } from '@switchboard/browser-registry';
import { startNats, startRedis, type NatsHandle, type RedisHandle } from '@switchboard/devcluster';
import { jobNames } from '@switchboard/jobs';
import { DEFAULT_BUCKET } from '@switchboard/keys';

let nats: NatsHandle;
let redis: RedisHandle;
const open: NatsConnection[] = [];

before(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
  // The key store as a gateway leaves it: the bucket exists and holds a record.
  const gateway = await as('gateway');
  const keys = await gateway.jetstream().views.kv(DEFAULT_BUCKET, { history: 1 });
  await keys.put('victimkeyid2', new TextEncoder().encode('{"id":"victimkeyid2"}'));
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await Promise.all([nats.stop(), redis.stop()]);
});

async function as(role: NatsRole | 'operator'): Promise<NatsConnection> {
  const nc = await connect({ ...nats.connectOptions(role), name: `test-${role}` });
  open.push(nc);
  return nc;
}

/** Resolves to the error `attempt` fails with; fails the test if it succeeds. */
async function refusal(attempt: () => Promise<unknown>): Promise<Error> {
  try {
    await attempt();
  } catch (error) {
    return error as Error;
  }
  assert.fail('expected the broker to refuse');
}

const permissionError = /permission|authoriz/i;
const kvOptions = { history: 1, timeout: 2_000 } as const;

test('the permission tables name the buckets, stream and subjects the libraries really use', () => {
  const jobs = jobNames();
  assert.equal(defaultResources.keysBucket, DEFAULT_BUCKET);
  assert.equal(defaultResources.keysUsageBucket, `${DEFAULT_BUCKET}_usage`);
  assert.equal(defaultResources.browserWorkersBucket, WORKERS_BUCKET);
  assert.equal(defaultResources.browserSessionsBucket, SESSIONS_BUCKET);
  assert.equal(defaultResources.browserRefusalsBucket, CAPACITY_REFUSALS_BUCKET);
  assert.equal(defaultResources.jobsStream, jobs.stream);
  assert.equal(defaultResources.jobsSubjectPrefix, jobs.subjectPrefix);
  assert.deepEqual(
    [...defaultResources.jobBuckets].sort(),
    [jobs.jobsBucket, jobs.idempotencyBucket, jobs.activeBucket, jobs.backendsBucket].sort(),
  );
});

describe('NATS', () => {
  test('a client without credentials, or with a wrong password, is refused', async () => {
    const bare = await refusal(() => connect({ servers: nats.url, reconnect: false }));
    assert.match(bare.message, permissionError);
    const wrong = await refusal(() =>
      connect({ servers: nats.url, user: 'gateway', pass: 'not-the-password', reconnect: false }),
    );
    assert.match(wrong.message, permissionError);
  });

  for (const role of natsRoles.filter((r) => r !== 'gateway')) {
    test(`the ${role} worker's credentials can neither read nor write the key store`, async () => {
      const nc = await as(role);
      const js = nc.jetstream({ timeout: 2_000 });
      // Opening the bucket (stream info), reading a record, watching it, writing a forged one.
      await refusal(() => js.views.kv(DEFAULT_BUCKET, kvOptions));
      const jsm = await nc.jetstreamManager({ timeout: 2_000 });
      await refusal(() =>
        jsm.streams.getMessage(`KV_${DEFAULT_BUCKET}`, {
          last_by_subj: `$KV.${DEFAULT_BUCKET}.victimkeyid2`,
        }),
      );
      const forged = await refusal(() => js.publish(`$KV.${DEFAULT_BUCKET}.victimkeyid2`, '{"forged":true}'));
      assert.match(forged.message, permissionError);
      // And the record is as the gateway wrote it.
      const operator = await as('operator');
      const entry = await (
        await operator.jetstream().views.kv(DEFAULT_BUCKET, kvOptions)
      ).get('victimkeyid2');
      assert.equal(entry?.string(), '{"id":"victimkeyid2"}');
    });
  }

  test("the browser worker's credentials cannot touch the job system, nor subscribe to others' replies", async () => {
    const nc = await as('browser');
    const js = nc.jetstream({ timeout: 2_000 });
    await refusal(() => js.publish(`${defaultResources.jobsSubjectPrefix}.avatar`, '{}'));
    await refusal(() => js.views.kv(jobNames().jobsBucket, kvOptions));
    // The gateway's answers (key records among them) come to its own inbox prefix.
    const sub = nc.subscribe('_INBOX_gateway.>');
    const ended = await refusal(async () => {
      for await (const message of sub) void message;
    });
    assert.match(ended.message, permissionError);
    // Nor may it read events, or the whole of _INBOX.
    const events = nc.subscribe(`${defaultResources.eventsPrefix}.>`);
    assert.match(
      (
        await refusal(async () => {
          for await (const m of events) void m;
        })
      ).message,
      permissionError,
    );
  });

  test('each service can do its own work: the browser its registry, the animation worker its jobs', async () => {
    const browser = await as('browser');
    const registry = await browser.jetstream().views.kv(WORKERS_BUCKET, kvOptions);
    await registry.put('worker-1', '{}');
    assert.equal((await registry.get('worker-1'))?.string(), '{}');
    browser.publish(`${defaultResources.eventsPrefix}.browser.session.created`, '{}');
    await browser.flush();

    const animation = await as('animation');
    const jobs = await animation.jetstream().views.kv(jobNames().jobsBucket, kvOptions);
    await jobs.put('owner.job-1', '{}');
    // The gateway reads the registry but cannot write it: only browser workers announce sessions.
    const gateway = await as('gateway');
    const view = await gateway.jetstream().views.kv(WORKERS_BUCKET, kvOptions);
    assert.equal((await view.get('worker-1'))?.string(), '{}');
    await refusal(() => view.put('worker-1', '{"forged":true}'));
    // Capacity refusals (each key's share of the browsers) are the gateways' own, beside it.
    const refusals = await gateway.jetstream().views.kv(CAPACITY_REFUSALS_BUCKET, kvOptions);
    await refusals.put('keyid2345678', '{}');
    await refusal(() => browser.jetstream().views.kv(CAPACITY_REFUSALS_BUCKET, kvOptions));
    // Live-view links (hashed tokens) are the gateways' alone: a worker can neither read nor forge one.
    const links = await gateway.jetstream().views.kv(defaultResources.browserLiveLinksBucket, kvOptions);
    await links.put('link-1', '{}');
    await refusal(() => browser.jetstream().views.kv(defaultResources.browserLiveLinksBucket, kvOptions));
    await refusal(() =>
      browser.jetstream().publish(`$KV.${defaultResources.browserLiveLinksBucket}.link-2`, '{}'),
    );
  });

  test('the webhook sender reads the events stream through its consumer, and nothing else', async () => {
    const stream = defaultResources.eventsStream;
    const webhooks = await as('webhooks');
    const jsm = await webhooks.jetstreamManager({ timeout: 2_000 });
    await jsm.streams.add({
      name: stream,
      subjects: [`${defaultResources.eventsPrefix}.>`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
    });
    await jsm.consumers.add(stream, { durable_name: 'webhooks', ack_policy: AckPolicy.Explicit });
    // Another service's event reaches the stream, and the sender takes it and acknowledges it.
    const browser = await as('browser');
    browser.publish(`${defaultResources.eventsPrefix}.browser.session.created`, '{"key_id":"k"}');
    await browser.flush();
    const consumer = await webhooks.jetstream({ timeout: 2_000 }).consumers.get(stream, 'webhooks');
    const message = await consumer.next({ expires: 5_000 });
    assert.ok(message, 'the event is in the stream');
    assert.equal(message.subject, `${defaultResources.eventsPrefix}.browser.session.created`);
    assert.ok(await message.ackAck());
    // It may neither publish an event (it could forge one for any key) nor subscribe to them,
    // nor destroy the stream, nor touch the job system.
    const forged = await refusal(() =>
      webhooks
        .jetstream({ timeout: 2_000 })
        .publish(`${defaultResources.eventsPrefix}.usage.quota.exceeded`, '{}'),
    );
    assert.match(forged.message, permissionError);
    await refusal(() => jsm.streams.purge(stream));
    await refusal(() => jsm.streams.delete(stream));
    await refusal(() => webhooks.jetstream({ timeout: 2_000 }).views.kv(jobNames().jobsBucket, kvOptions));
    const events = webhooks.subscribe(`${defaultResources.eventsPrefix}.>`);
    assert.match(
      (
        await refusal(async () => {
          for await (const m of events) void m;
        })
      ).message,
      permissionError,
    );
  });
});

describe('Redis', () => {
  const client = (role: 'gateway' | 'operator' | null) => {
    const credentials = role ? redis.credentials(role) : undefined;
    return new Redis(redis.url, {
      ...(credentials ? { username: credentials.user, password: credentials.password } : {}),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableReadyCheck: false,
      retryStrategy: () => null,
    });
  };

  test('without credentials nothing is served', async () => {
    const c = client(null);
    try {
      await c.connect().catch(() => undefined);
      const error = await refusal(() => c.get('sb:rl:anything'));
      assert.match(error.message, /NOAUTH|NOPERM/);
    } finally {
      c.disconnect();
    }
  });

  test("the gateway's user reaches only its own keys, and no administration", async () => {
    const c = client('gateway');
    try {
      await c.connect();
      await c.set('sb:rl:key:abc', '1');
      assert.equal(await c.get('sb:rl:key:abc'), '1');
      for (const attempt of [
        () => c.get('other:key'),
        () => c.flushall(),
        () => c.config('GET', 'dir'),
        () => c.call('ACL', 'LIST'),
        () => c.keys('*'),
      ]) {
        assert.match((await refusal(attempt)).message, /NOPERM/);
      }
    } finally {
      c.disconnect();
    }
  });
});
