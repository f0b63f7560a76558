// npm run bench:webhooks — one key's slow endpoint must not hold up another key's deliveries.
// A real sender process (production timeout and retry schedule) on real NATS/JetStream and
// PostgreSQL; events published on NATS as a service publishes them; two receivers on 127.0.0.1:
// a slow one (answers 200 after 2 s) and a fast one (answers at once), belonging to two keys.
// Event → receipt latency of the fast endpoint's deliveries (publish to the request's arrival),
// p50 / p95 / max, first alone, then right behind a burst of BENCH_SLOW_EVENTS events of the slow
// key, then while their deliveries wait for the slow endpoint (BENCH_SLOW_ENDPOINTS of them: a key
// may have 20, each with its own share of attempts in flight).
import { newEventId } from '@switchboard/events';
import { connect, type NatsConnection } from 'nats';
import { createKey } from '../support/admin.js';
import { sleep, startStack } from '../support/stack.js';
import {
  registerEndpoint,
  startReceiver,
  startSender,
  webhookSettings,
  type Receiver,
} from '../support/webhooks.js';
import { percentile } from './stats.js';

const slowEvents = Number(process.env.BENCH_SLOW_EVENTS ?? 1000);
/** The slow key's endpoints (all at the slow receiver): each event is delivered to every one. */
const slowEndpoints = Number(process.env.BENCH_SLOW_ENDPOINTS ?? 1);
const fastEvents = Number(process.env.BENCH_FAST_EVENTS ?? 100);
/** Fast events are spread out (20 a second), as a key's jobs finishing one after another are. */
const fastIntervalMs = Number(process.env.BENCH_FAST_INTERVAL_MS ?? 50);
const SLOW_ANSWER_MS = 2000;

/** Publishes one `animate.job.queued` of `keyId` as the gateway would; returns its id and time. */
function publishQueued(nc: NatsConnection, keyId: string, n: number | string): { id: string; at: number } {
  const at = Date.now();
  const id = newEventId(at);
  const jobId = `job-bench-${keyId}-${n}`;
  const when = new Date(at).toISOString();
  const data = {
    job_id: jobId,
    backend: 'video-diffusion',
    status: 'queued',
    progress: 0,
    attempts: 0,
    created_at: when,
    updated_at: when,
    result: null,
    error: null,
  };
  nc.publish(
    'switchboard.events.animate.job.queued',
    JSON.stringify({
      job_id: jobId,
      key_id: keyId,
      backend: 'video-diffusion',
      status: 'queued',
      attempts: 0,
      data,
      id,
      at: when,
    }),
  );
  return { id, at };
}

/** Publishes the fast key's events at their pace and waits for every one; returns latencies (ms). */
async function fastRound(
  nc: NatsConnection,
  keyId: string,
  fast: Receiver,
  round: string,
): Promise<number[]> {
  const published = new Map<string, number>();
  for (let i = 0; i < fastEvents; i++) {
    const { id, at } = publishQueued(nc, keyId, `${round}-${i}`);
    published.set(id, at);
    await sleep(fastIntervalMs);
  }
  const deadline = Date.now() + 120_000;
  const received = () => fast.requests.filter((r) => published.has(r.id));
  while (new Set(received().map((r) => r.id)).size < published.size) {
    if (Date.now() > deadline) throw new Error(`${round}: ${received().length} of ${published.size} arrived`);
    await sleep(20);
  }
  const first = new Map<string, number>();
  for (const r of received()) if (!first.has(r.id)) first.set(r.id, r.receivedAt);
  return [...first].map(([id, at]) => at - published.get(id)!);
}

function report(label: string, ms: number[]): void {
  const fmt = (value: number) => value.toFixed(0).padStart(6);
  console.log(
    `${label.padEnd(48)} n ${String(ms.length).padStart(5)}  p50 ${fmt(percentile(ms, 50))} ms  p95 ${fmt(percentile(ms, 95))} ms  max ${fmt(Math.max(...ms))} ms`,
  );
}

/** The most requests the receiver held at once (each is held SLOW_ANSWER_MS). */
function mostInFlight(receiver: Receiver): number {
  const times = receiver.requests.map((r) => r.receivedAt);
  let most = 0;
  for (const t of times) most = Math.max(most, times.filter((u) => u <= t && u > t - SLOW_ANSWER_MS).length);
  return most;
}

// The production timeout (15 s) and schedule: a 2 s answer is a success, as it would be there.
const settings = await webhookSettings({
  senderEnv: { WEBHOOK_TIMEOUT_MS: '15000', WEBHOOK_RETRY_SCHEDULE: '5s,5m,30m,2h,5h,10h,10h' },
});
const stack = await startStack({ env: settings.gatewayEnv });
const slow = await startReceiver(() => ({ status: 200, delayMs: SLOW_ANSWER_MS }));
const fast = await startReceiver();
let nc: NatsConnection | undefined;
const sender = await startSender(stack.nats, settings);
try {
  nc = await connect(stack.nats.connectOptions('operator'));
  const slowKey = await createKey(stack.gateway, { tier: 'enterprise' });
  const fastKey = await createKey(stack.gateway, { tier: 'enterprise' });
  for (let i = 0; i < slowEndpoints; i++) {
    await registerEndpoint(stack.gateway, slowKey.key, { url: slow.url, events: ['animate.job.*'] });
  }
  await registerEndpoint(stack.gateway, fastKey.key, { url: fast.url, events: ['animate.job.*'] });

  // Warm-up: connections, statement plans.
  publishQueued(nc, fastKey.id, -1);
  await fast.untilCount(1);

  report(
    `fast alone (${fastEvents} events, ${1000 / fastIntervalMs}/s)`,
    await fastRound(nc, fastKey.id, fast, 'alone'),
  );

  const loadStarted = Date.now();
  for (let i = 0; i < slowEvents; i++) publishQueued(nc, slowKey.id, i);
  await nc.flush();
  report(
    `fast, right behind a burst of ${slowEvents} events for the slow key`,
    await fastRound(nc, fastKey.id, fast, 'behind the burst'),
  );
  // Every event taken from the queue: what is left is the slow endpoint's backlog alone.
  const published = 1 + 2 * fastEvents + slowEvents;
  while ((await sender.metric('webhooks_events_total', { result: 'queued' })) < published) await sleep(50);
  report(
    `fast, while ${slowEndpoints} slow endpoint(s) have a backlog`,
    await fastRound(nc, fastKey.id, fast, 'beside the backlog'),
  );
  const loadSeconds = (Date.now() - loadStarted) / 1000;
  console.log(
    `slow receiver meanwhile: ${slow.requests.length} of ${slowEvents * slowEndpoints} deliveries received in ${loadSeconds.toFixed(1)} s, at most ${mostInFlight(slow)} in flight at once`,
  );
} finally {
  await nc?.close();
  await sender.stop();
  await Promise.all([slow.close(), fast.close()]);
  await stack.stop();
}
