// The gateway's metering service on the real usage store (PostgreSQL) and real NATS: quota
// refusals worded for the client (meter, Retry-After to the period's end) with one exceeded event
// per period, reservations settled to the real cost, a record id counted once however often it is
// written, the 80 % warning, work refused while the store is unreachable, and records written
// during an outage stored once it is back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { startNats, startPostgres, type NatsHandle, type PostgresHandle } from '@switchboard/devcluster';
import { isSwitchboardError } from '@switchboard/errors';
import { defaultTierPolicies, type KeyRecord } from '@switchboard/keys';
import { createLogger, createRegistry } from '@switchboard/telemetry';
import {
  openUsageStore,
  secondsToPeriodEnd,
  type QuotaOverrides,
  type UsageRecord,
  type UsageStore,
} from '@switchboard/usage';
import {
  createGatewayMetrics,
  EventPublisher,
  Metering,
  type GatewayMetrics,
} from '@switchboard/gateway/metering';
import { until } from '../support/stack.js';

const logger = createLogger({ service: 'metering-test', level: 'silent' });
let nats: NatsHandle;
let postgres: PostgresHandle;
let gatewayNats: NatsConnection;
let operator: NatsConnection;
let store: UsageStore;
let metrics: GatewayMetrics;
let metering: Metering;

before(async () => {
  [nats, postgres] = await Promise.all([startNats(), startPostgres()]);
  gatewayNats = await connect(nats.connectOptions('gateway'));
  operator = await connect(nats.connectOptions('operator'));
  store = await openUsageStore({ url: postgres.url, logger });
  metrics = createGatewayMetrics(createRegistry('gateway'));
  metering = new Metering(
    {
      usage: store,
      events: new EventPublisher(gatewayNats, logger),
      metrics,
      logger,
      keys: { get: () => Promise.reject(new Error('no key lookups here')) },
      config: { tiers: defaultTierPolicies },
    },
    { capacity: 100, firstDelayMs: 200, maxDelayMs: 1_000 },
  );
});
after(async () => {
  metering?.close();
  await store?.close();
  await gatewayNats?.close();
  await operator?.close();
  await Promise.all([nats?.stop(), postgres?.stop()]);
});

let keys = 0;
/** A fresh key (its own usage and quotas) with `quotas` of its own. */
function keyWith(quotas: QuotaOverrides): KeyRecord {
  const id = `meterkey${String(++keys).padStart(4, '0')}`;
  const key: KeyRecord & { quotas: QuotaOverrides } = {
    id,
    name: id,
    tier: 'enterprise',
    ip_allowlist: [],
    rate_limit_per_minute: null,
    created_at: new Date().toISOString(),
    status: 'active',
    prefix: 'sb_key',
    secrets: [],
    quotas,
  };
  return key;
}

/** Events of `subject` on NATS, as the operator sees them. */
function collect(subject: string): { bodies: Record<string, unknown>[]; stop: () => void } {
  const bodies: Record<string, unknown>[] = [];
  const sub = operator.subscribe(subject);
  void (async () => {
    for await (const message of sub) bodies.push(message.json());
  })();
  return { bodies, stop: () => sub.unsubscribe() };
}

const sample = async (
  metric: { get(): Promise<{ values: { labels: object; value: number }[] }> },
  labels: object,
) => (await metric.get()).values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels))?.value ?? 0;

async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => assert.fail('admitted past the quota'),
    (e: unknown) => e,
  );
  assert.ok(isSwitchboardError(error), String(error));
  return error;
}

test('past a quota a call is refused with the meter and Retry-After; one exceeded event per period', async () => {
  const events = collect('switchboard.events.usage.quota.exceeded');
  const key = keyWith({ images: { limit: 2, period: 'day' } });
  const image = { capability: 'diffusion' as const, reserve: { images: 1 }, deadlineMs: 60_000 };
  await metering.admitFor(key, image);
  await metering.admitFor(key, image);
  const refusalsBefore = await sample(metrics.quotaRefusals, { meter: 'images' });
  const refused = await refusal(metering.admitFor(key, image));
  assert.equal(refused.code, 'quota_exceeded');
  assert.equal(refused.param, 'images');
  const expected = secondsToPeriodEnd('day', new Date());
  assert.ok(
    Math.abs(refused.retryAfterSeconds! - expected) <= 2,
    `${refused.retryAfterSeconds} vs ${expected}`,
  );
  await refusal(metering.admitFor(key, image));
  assert.equal(await sample(metrics.quotaRefusals, { meter: 'images' }), refusalsBefore + 2);

  await gatewayNats.flush();
  await until(() => events.bodies.length >= 1, 'the exceeded event');
  await operator.flush();
  events.stop();
  assert.equal(events.bodies.length, 1, 'published at the first refusal of the period only');
  const [body] = events.bodies;
  assert.equal(body!.key_id, key.id);
  assert.equal(body!.meter, 'images');
  assert.equal(body!.limit, 2);
  assert.equal(body!.period, 'day');
  assert.equal(body!.used, 2);
  for (const field of ['period_start', 'period_end', 'at'])
    assert.equal(typeof body![field], 'string', field);
});

test('a reservation settles to the real cost: what it did not use is free again', async () => {
  const key = keyWith({ output_tokens: { limit: 100, period: 'month' } });
  const call = { capability: 'llm' as const, check: ['requests' as const], deadlineMs: 60_000 };
  const first = await metering.admitFor(key, { ...call, reserve: { output_tokens: 90 } });
  await refusal(metering.admitFor(key, { ...call, reserve: { output_tokens: 20 } }));
  await first.record({ requests: 1, input_tokens: 5, output_tokens: 30 }, 'tiny');
  const second = await metering.admitFor(key, { ...call, reserve: { output_tokens: 70 } });
  await refusal(metering.admitFor(key, { ...call, reserve: { output_tokens: 1 } }));
  // A failed call gives back all it held.
  await second.release();
  await metering.admitFor(key, { ...call, reserve: { output_tokens: 70 } });
  assert.deepEqual(await store.used(key.id, 'output_tokens', 'month'), { settled: 30, reserved: 70 });
});

test('a response that closes unrecorded releases what the call held, or records what it measured', async () => {
  const key = keyWith({ output_tokens: { limit: 50, period: 'day' } });
  const call = { capability: 'llm' as const, reserve: { output_tokens: 50 }, deadlineMs: 60_000 };
  const cutBeforeAnyWork = await metering.admitFor(key, call);
  cutBeforeAnyWork.closed();
  await until(async () => (await store.used(key.id, 'output_tokens', 'day')).reserved === 0, 'released');
  const cutStream = await metering.admitFor(key, call);
  cutStream.onClose(() => ({ values: { requests: 1, input_tokens: 4, output_tokens: 12 }, model: 'tiny' }));
  cutStream.closed();
  await until(async () => (await store.used(key.id, 'output_tokens', 'day')).settled === 12, 'recorded');
  assert.equal((await store.used(key.id, 'output_tokens', 'day')).reserved, 0);
});

test('a record id counts once however often it is written; the metric counts it once too', async () => {
  const key = keyWith({});
  const record: UsageRecord = {
    id: `job:${key.id}`,
    key_id: key.id,
    capability: 'animation',
    model: 'video-diffusion',
    at: new Date(),
    values: { video_frames: 14, video_seconds: 2 },
  };
  const labels = { capability: 'animation', meter: 'video_frames' };
  const counted = await sample(metrics.usageRecorded, labels);
  await metering.record(record, {});
  await metering.record({ ...record, values: { video_frames: 999, video_seconds: 99 } }, {});
  assert.equal(await sample(metrics.usageRecorded, labels), counted + 14);
  assert.deepEqual(await store.used(key.id, 'video_frames', 'day'), { settled: 14, reserved: 0 });
});

test('a record taking the key past 80 % of a quota publishes one warning', async () => {
  const events = collect('switchboard.events.usage.quota.warning');
  const key = keyWith({ audio_seconds: { limit: 100, period: 'day' } });
  const quotas = { audio_seconds: { limit: 100, period: 'day' as const } };
  const record = (id: string, seconds: number): UsageRecord => ({
    id: `call:${key.id}-${id}`,
    key_id: key.id,
    capability: 'whisper',
    model: 'tiny',
    at: new Date(),
    values: { requests: 1, audio_seconds: seconds },
  });
  await metering.record(record('a', 70), quotas);
  await metering.record(record('b', 15), quotas);
  await metering.record(record('c', 5), quotas);
  await gatewayNats.flush();
  await until(() => events.bodies.length >= 1, 'the warning event');
  await operator.flush();
  events.stop();
  assert.equal(events.bodies.length, 1);
  assert.equal(events.bodies[0]!.meter, 'audio_seconds');
  assert.equal(events.bodies[0]!.used, 85);
});

test('while the store is down no metered work starts, and records written then are stored after', async () => {
  const key = keyWith({ images: { limit: 5, period: 'day' } });
  const failuresBefore = await sample(metrics.usageRecordFailures, { outcome: 'retried' });
  await postgres.kill();
  try {
    const refused = await refusal(
      metering.admitFor(key, { capability: 'diffusion', reserve: { images: 1 }, deadlineMs: 1_000 }),
    );
    assert.equal(refused.code, 'unavailable');
    await metering.record(
      {
        id: `call:${key.id}-outage`,
        key_id: key.id,
        capability: 'diffusion',
        model: 'sd',
        at: new Date(),
        values: { images: 1, megapixel_steps: 5.24288 },
      },
      {},
    );
    assert.equal(metering.retrying, 1, 'kept to be written again');
    assert.equal(await sample(metrics.usageRecordFailures, { outcome: 'retried' }), failuresBefore + 1);
  } finally {
    await postgres.restart();
  }
  await until(() => metering.retrying === 0, 'the queued record written', 30_000);
  assert.deepEqual(await store.used(key.id, 'images', 'day'), { settled: 1, reserved: 0 });
});
