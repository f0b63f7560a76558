// The sender against a real NATS (with the cluster's permissions) and a real PostgreSQL: an event
// published on NATS reaches its key's endpoint signed, is retried on failure with one webhook-id,
// and never reaches another key's endpoint.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { startNats, startPostgres, type NatsHandle, type PostgresHandle } from '@switchboard/devcluster';
import { EventPublisher } from '@switchboard/events';
import { createLogger } from '@switchboard/telemetry';
import { SecretBox, WebhookStore } from '@switchboard/webhooks';
import { loadWebhooksConfig } from './config.js';
import { startWebhookSender, type RunningWebhookSender } from './sender.js';

const secretsKey = 'sender-test-secrets-key-0123456789abcdef';
const logger = createLogger({ service: 'webhooks-test', level: 'silent' });

interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let nats: NatsHandle;
let postgres: PostgresHandle;
let store: WebhookStore;
let sender: RunningWebhookSender;
let publisherConnection: NatsConnection;
let events: EventPublisher;
let receiver: http.Server;
let port: number;
const received: Delivery[] = [];
/** Status to answer per path, in order; 200 once a path's list is used up. */
const script = new Map<string, number[]>();

before(async () => {
  [nats, postgres] = await Promise.all([startNats(), startPostgres()]);
  const databaseUrl = await postgres.createDatabase();
  store = await WebhookStore.open({ connectionString: databaseUrl, secretBox: new SecretBox(secretsKey) });
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const status = script.get(path)?.shift() ?? 200;
      // A slow endpoint: answers, but only after a while.
      const delay = path === '/slow' ? 1_500 : path === '/draining' ? 500 : 0;
      setTimeout(() => res.writeHead(status).end(), delay);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  const credentials = nats.credentials('webhooks');
  const config = loadWebhooksConfig({
    GRPC_PORT: '0',
    GRPC_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    NATS_URL: nats.url,
    NATS_USER: credentials.user,
    NATS_PASSWORD: credentials.password,
    WEBHOOK_DATABASE_URL: databaseUrl,
    WEBHOOK_SECRETS_KEY: secretsKey,
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms',
    WEBHOOK_TIMEOUT_MS: '2000',
    SHUTDOWN_GRACE_MS: '2000',
  });
  sender = await startWebhookSender(config, logger);
  publisherConnection = await connect({ ...nats.connectOptions('animation'), name: 'test-publisher' });
  events = new EventPublisher(publisherConnection, logger);
});

after(async () => {
  await sender?.close();
  await publisherConnection?.close();
  await store?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await Promise.all([nats?.stop(), postgres?.stop()]);
});

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function endpoint(keyId: string, path: string): Promise<string> {
  const created = await store.createEndpoint(keyId, {
    url: `http://127.0.0.1:${port}${path}`,
    events: ['animate.job.*'],
    description: null,
  });
  assert.notEqual(created, 'limit');
  return created === 'limit' ? '' : created.secret;
}

/** Standard Webhooks v1: HMAC-SHA256 over "<id>.<timestamp>.<body>" with the secret's bytes. */
function signedBy(secret: string, delivery: Delivery): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(
      `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.${delivery.body}`,
    )
    .digest('base64');
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((signature) => signature === `v1,${expected}`);
}

test("a key's event reaches its endpoint signed, with the API's data; another key's endpoint gets nothing", async () => {
  const secret = await endpoint('key-one', '/one');
  await endpoint('key-two', '/two');
  events.publish('animate.job.succeeded', {
    job_id: 'job-1',
    key_id: 'key-one',
    status: 'succeeded',
    data: { job_id: 'job-1', status: 'succeeded', updated_at: '2026-03-01T12:00:00.000Z' },
  });
  const delivery = await until('the delivery', () => received.find((r) => r.path === '/one'));
  assert.ok(signedBy(secret, delivery), 'signature verifies');
  assert.match(String(delivery.headers['webhook-id']), /^evt_/);
  assert.equal(delivery.headers['content-type'], 'application/json');
  assert.equal(delivery.headers['user-agent'], 'Switchboard-Webhooks/1');
  const body = JSON.parse(delivery.body) as { type: string; timestamp: string; data: unknown };
  assert.equal(body.type, 'animate.job.succeeded');
  assert.deepEqual(body.data, {
    job_id: 'job-1',
    status: 'succeeded',
    updated_at: '2026-03-01T12:00:00.000Z',
  });
  // A later event of key-one reaches /one; by then key-two's would have too, had it been sent.
  events.publish('animate.job.failed', { key_id: 'key-one', data: { job_id: 'job-2' } });
  await until('the second delivery', () =>
    received.filter((r) => r.path === '/one').length === 2 ? true : undefined,
  );
  assert.equal(received.filter((r) => r.path === '/two').length, 0);
});

test('an endpoint answering 500 twice then 200 gets three attempts with one webhook-id', async () => {
  script.set('/flaky', [500, 500]);
  const secret = await endpoint('key-flaky', '/flaky');
  events.publish('animate.job.queued', { key_id: 'key-flaky', data: { job_id: 'job-3' } });
  const attempts = await until('three attempts', () => {
    const seen = received.filter((r) => r.path === '/flaky');
    return seen.length >= 3 ? seen : undefined;
  });
  assert.equal(new Set(attempts.map((a) => a.headers['webhook-id'])).size, 1);
  assert.ok(attempts.every((a) => signedBy(secret, a)));
  // Succeeded on the third: no fourth.
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(received.filter((r) => r.path === '/flaky').length, 3);
});

test('events that are not for webhooks are acknowledged and dropped', async () => {
  const before = received.length;
  events.publish('keys.created', { key_id: 'key-one' });
  events.publish('animate.job.queued', { data: { job_id: 'no-owner' } });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(received.length, before);
});

test("a slow endpoint's backlog does not delay another key's deliveries", async () => {
  await endpoint('key-slow', '/slow');
  await endpoint('key-fast', '/fast');
  for (let i = 0; i < 40; i++) events.publish('animate.job.running', { key_id: 'key-slow', data: { n: i } });
  // The slow endpoint's first attempts are under way (and hold its share of the sender).
  await until('the slow endpoint busy', () => (received.some((r) => r.path === '/slow') ? true : undefined));
  const sent = Date.now();
  events.publish('animate.job.running', { key_id: 'key-fast', data: { n: 0 } });
  await until('the fast delivery', () => received.find((r) => r.path === '/fast'), 5_000);
  const latencyMs = Date.now() - sent;
  assert.ok(latencyMs < 1_000, `delivered after ${latencyMs} ms`);
  // At most WEBHOOK_ENDPOINT_CONCURRENCY (4) attempts reached the slow endpoint in its first 1.5 s.
  assert.ok(received.filter((r) => r.path === '/slow').length <= 4);
});

test('an event published while PostgreSQL is down waits in the stream and is delivered once it is back', async () => {
  await endpoint('key-outage', '/outage');
  await postgres.kill();
  try {
    events.publish('animate.job.succeeded', { key_id: 'key-outage', data: { job_id: 'job-outage' } });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(received.filter((r) => r.path === '/outage').length, 0);
  } finally {
    await postgres.restart();
  }
  const delivery = await until(
    'the delivery after the outage',
    () => received.find((r) => r.path === '/outage'),
    30_000,
  );
  assert.match(delivery.body, /job-outage/);
});

test('on shutdown, an attempt under way finishes and is recorded', async () => {
  await endpoint('key-draining', '/draining');
  const [row] = await store.listEndpoints('key-draining');
  events.publish('animate.job.succeeded', { key_id: 'key-draining', data: { job_id: 'job-draining' } });
  // The endpoint has the request and answers in 500 ms; the sender is told to stop meanwhile.
  await until('the attempt under way', () => received.find((r) => r.path === '/draining'));
  await sender.close();
  const page = await store.listDeliveries('key-draining', row!.id);
  assert.deepEqual(
    page?.data.map((d) => [d.status, d.attempts, d.response_status]),
    [['succeeded', 1, 200]],
  );
});
