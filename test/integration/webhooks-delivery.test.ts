// Webhook deliveries end to end (§11): a key's own job events reach its endpoint signed as Standard
// Webhooks (checked with the official `standardwebhooks` package) and never another key's; retries
// keep one webhook-id; redirects are failures; 410 disables at once; an endpoint failing past its
// limit is disabled and the key's other endpoints are told; an endpoint that was down, a sender
// killed mid-delivery, or an event that happened while no sender ran, still gets through; two
// senders deliver each event once; one key's hanging endpoints do not hold up another key's
// deliveries; a rotated secret signs beside the old one during its grace only. Real
// NATS/JetStream, real PostgreSQL, the gateway, real sender processes and HTTP receivers on
// 127.0.0.1.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer } from '../support/admin.js';
import {
  acceptedJobId,
  dataUrl,
  getJob,
  makeFixtures,
  runJob,
  startAnimationStack,
  submit,
  type AnimationStack,
  type Fixtures,
} from '../support/animation.js';
import { sleep, until } from '../support/stack.js';
import {
  getEndpoint,
  registerEndpoint,
  rotateSecret,
  sendTestEvent,
  startReceiver,
  startSender,
  statuses,
  summary,
  typeOf,
  untilDeliveries,
  verifies,
  verifyWebhook,
  webhookSettings,
  type Receiver,
  type WebhookSettings,
} from '../support/webhooks.js';
import type { WorkerProcess } from '../support/worker.js';

let s: AnimationStack;
let fx: Fixtures;
let settings: WebhookSettings;
/** The file's sender; a test that kills or replaces it leaves another in its place. */
let sender: WorkerProcess;
const receivers: Receiver[] = [];

before(async () => {
  settings = await webhookSettings();
  [s, fx] = await Promise.all([startAnimationStack({ gatewayEnv: settings.gatewayEnv }), makeFixtures()]);
  sender = await startSender(s.stack.nats, settings);
});
after(async () => {
  await sender?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await s?.stop();
  await fx?.remove();
});

async function receiver(...codes: number[]): Promise<Receiver> {
  const started = await startReceiver(codes.length === 0 ? undefined : statuses(...codes));
  receivers.push(started);
  return started;
}

/** A key of its own per test: enterprise, so ten queued jobs at once are allowed. */
const newKey = async () => (await s.key('enterprise')).key;

/** A job the gateway queues: its `animate.job.queued` event (no worker runs it after the first test). */
async function queueJob(key: string): Promise<string> {
  return acceptedJobId(
    await submit(s.gateway, key, {
      backend: 'video-diffusion',
      image: dataUrl('image/png', fx.png),
      fps: 4,
      duration_s: 1,
    }),
  );
}

async function cancelJob(key: string, jobId: string): Promise<void> {
  const res = await fetch(`${s.gateway.url}/animate/${jobId}`, { method: 'DELETE', headers: bearer(key) });
  assert.equal(res.status, 200, await res.text());
}

/** Only the queued events: one per job, so tests can count requests exactly. */
const QUEUED_ONLY = ['animate.job.queued'];

test("a job's queued, running and succeeded events reach its key's endpoint, signed; another key's endpoint gets nothing", async () => {
  const [owner, other] = [await newKey(), await newKey()];
  const [mine, theirs] = [await receiver(), await receiver()];
  const endpoint = await registerEndpoint(s.gateway, owner, { url: mine.url, description: 'jobs' });
  assert.match(endpoint.secret, /^whsec_/);
  const otherEndpoint = await registerEndpoint(s.gateway, other, { url: theirs.url });

  const worker = await s.startWorker();
  try {
    const job = await runJob(
      s.gateway,
      owner,
      { backend: 'video-diffusion', image: dataUrl('image/png', fx.png), fps: 4, duration_s: 1 },
      120_000,
    );
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const wanted = ['animate.job.queued', 'animate.job.running', 'animate.job.succeeded'];
    await until(
      () => wanted.every((type) => mine.requests.some((r) => typeOf(r) === type)),
      `the endpoint got ${wanted.join(', ')} (got ${JSON.stringify(mine.requests.map(summary))})`,
    );

    const byId = new Map<string, string>();
    for (const request of mine.requests) {
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/hook');
      assert.match(request.headers['content-type'] ?? '', /^application\/json/);
      const payload = verifyWebhook(endpoint.secret, request);
      assert.ok(!verifies(otherEndpoint.secret, request), 'another secret does not verify it');
      assert.ok(!Number.isNaN(Date.parse(payload.timestamp)), payload.timestamp);
      assert.equal(payload.data.job_id, job.job_id);
      assert.equal(payload.data.status, payload.type.slice('animate.job.'.length));
      assert.equal(typeof payload.data.updated_at, 'string');
      byId.set(request.id, payload.type);
    }
    assert.deepEqual([...new Set(byId.values())].sort(), [...wanted].sort());
    assert.equal(byId.size, 3, 'one webhook-id per event');

    // The succeeded event's data is the job as its owner reads it.
    const succeeded = mine.requests.find((r) => typeOf(r) === 'animate.job.succeeded')!;
    const data = verifyWebhook(endpoint.secret, succeeded).data;
    const read = await getJob(s.gateway, owner, job.job_id);
    for (const field of ['job_id', 'backend', 'status', 'attempts', 'result', 'error'] as const) {
      assert.deepEqual(data[field], read[field], field);
    }

    await sleep(1500);
    assert.deepEqual(theirs.requests.map(summary), [], "another key's endpoint hears nothing of it");
    assert.equal(theirs.connections, 0);
  } finally {
    await worker.stop();
  }
});

test('500, 500, then 200: three attempts carrying one webhook-id, on the retry schedule', async () => {
  const key = await newKey();
  const hook = await receiver(500, 500, 200);
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  await queueJob(key);

  const attempts = await hook.untilCount(3);
  await sleep(1500);
  assert.equal(hook.requests.length, 3, 'nothing after the 200');
  assert.equal(new Set(hook.ids()).size, 1, `one webhook-id: ${JSON.stringify(hook.ids())}`);
  for (const request of attempts) verifyWebhook(endpoint.secret, request);
  // 300 ms and 600 ms, with at most 20 % jitter off.
  const gaps = [
    attempts[1]!.receivedAt - attempts[0]!.receivedAt,
    attempts[2]!.receivedAt - attempts[1]!.receivedAt,
  ];
  assert.ok(gaps[0]! >= 240 && gaps[1]! >= 480, `retried after ${gaps.join(' and ')} ms`);

  const [delivery] = await untilDeliveries(
    s.gateway,
    key,
    endpoint.id,
    (d) => d[0]?.status === 'succeeded',
    'the delivery succeeded',
  );
  assert.equal(delivery!.attempts, 3);
  assert.equal(delivery!.response_status, 200);
  assert.equal(delivery!.event_id, hook.requests[0]!.id, 'the event id is the webhook-id');
  assert.equal(delivery!.type, 'animate.job.queued');
});

test('a redirect is never followed: every 302 is a failed attempt, and its target hears nothing', async () => {
  const key = await newKey();
  const target = await receiver();
  const hook = await receiver();
  hook.script = () => ({ status: 302, headers: { location: target.url } });
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  await queueJob(key);

  const [delivery] = await untilDeliveries(
    s.gateway,
    key,
    endpoint.id,
    (d) => d[0]?.status === 'failed',
    'the delivery failed once its retries were spent',
  );
  assert.equal(delivery!.response_status, 302);
  assert.equal(delivery!.attempts, 4, 'the first attempt and one per entry of the schedule');
  assert.equal(hook.requests.length, 4);
  assert.equal(new Set(hook.ids()).size, 1);
  assert.equal(target.connections, 0, 'the Location was never visited');
  assert.equal((await getEndpoint(s.gateway, key, endpoint.id)).status, 'enabled');
});

test('410 Gone disables the endpoint at once; nothing more is sent to it', async () => {
  const key = await newKey();
  const hook = await receiver(410);
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  await queueJob(key);

  await hook.untilCount(1);
  let view = await getEndpoint(s.gateway, key, endpoint.id);
  await until(async () => {
    view = await getEndpoint(s.gateway, key, endpoint.id);
    return view.status === 'disabled';
  }, 'the endpoint is disabled');
  assert.equal(view.disabled_reason, 'gone');
  const [delivery] = await untilDeliveries(
    s.gateway,
    key,
    endpoint.id,
    (d) => d[0]?.status === 'failed',
    'the delivery failed',
  );
  assert.equal(delivery!.attempts, 1, 'no retry after 410');
  assert.equal(delivery!.response_status, 410);

  await queueJob(key);
  await sleep(2000);
  assert.equal(hook.requests.length, 1, 'a disabled endpoint gets nothing');
});

test('an endpoint failing past WEBHOOK_DISABLE_AFTER is disabled and the key’s other endpoints get webhook.endpoint.disabled', async () => {
  const key = await newKey();
  const failing = await receiver(500);
  const told = await receiver();
  const doomed = await registerEndpoint(s.gateway, key, { url: failing.url, events: QUEUED_ONLY });
  const other = await registerEndpoint(s.gateway, key, { url: told.url });

  // A sender of its own that gives up on an endpoint after 1 s of failures (not 5 days), with
  // retries enough to outlast that.
  await sender.stop();
  const impatient = await startSender(s.stack.nats, settings, {
    WEBHOOK_DISABLE_AFTER: '1s',
    WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 12 }, () => '300ms').join(','),
  });
  try {
    await queueJob(key);
    let view = await getEndpoint(s.gateway, key, doomed.id);
    await until(async () => {
      view = await getEndpoint(s.gateway, key, doomed.id);
      return view.status === 'disabled';
    }, 'the failing endpoint is disabled');
    assert.equal(view.disabled_reason, 'failing');

    await until(
      () => told.requests.some((r) => typeOf(r) === 'webhook.endpoint.disabled'),
      `the other endpoint is told (got ${JSON.stringify(told.requests.map(summary))})`,
    );
    const notice = told.requests.find((r) => typeOf(r) === 'webhook.endpoint.disabled')!;
    const payload = verifyWebhook(other.secret, notice);
    assert.equal(payload.data.id, doomed.id);
    const attemptsSoFar = failing.requests.length;
    await sleep(1500);
    assert.equal(failing.requests.length, attemptsSoFar, 'no attempts once disabled');
  } finally {
    await impatient.stop();
    sender = await startSender(s.stack.nats, settings);
  }
});

test('an endpoint that is down when the event happens gets it once it is back', async () => {
  const key = await newKey();
  const hook = await receiver();
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  await hook.down();
  await queueJob(key);

  const [refused] = await untilDeliveries(
    s.gateway,
    key,
    endpoint.id,
    (d) => (d[0]?.attempts ?? 0) >= 1,
    'a first, refused attempt',
  );
  assert.equal(refused!.status, 'pending', 'retried, not given up');
  assert.notEqual(refused!.error, null);
  assert.equal(refused!.response_status, null);
  await hook.up();

  const [request] = await hook.untilCount(1);
  assert.equal(verifyWebhook(endpoint.secret, request!).type, 'animate.job.queued');
  assert.equal(request!.id, refused!.event_id);
  await untilDeliveries(s.gateway, key, endpoint.id, (d) => d[0]?.status === 'succeeded', 'success');
});

test('a sender killed mid-delivery: another sender delivers the event, with the same webhook-id', async () => {
  const key = await newKey();
  const hook = await receiver();
  // The first request is held open until the sender dies; later ones are answered.
  hook.script = (_request, index) => (index === 0 ? { hold: true } : { status: 200 });
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  await queueJob(key);

  const [first] = await hook.untilCount(1);
  sender.child.kill('SIGKILL');
  await until(() => sender.child.exitCode !== null || sender.child.signalCode !== null, 'the sender died');
  sender = await startSender(s.stack.nats, settings);

  const [, second] = await hook.untilCount(2, 60_000);
  assert.equal(second!.id, first!.id, 'the same webhook-id, so the receiver can de-duplicate');
  verifyWebhook(endpoint.secret, second!);
  await untilDeliveries(s.gateway, key, endpoint.id, (d) => d[0]?.status === 'succeeded', 'success');
});

test('an event that happens while no sender runs is delivered once one starts', async () => {
  const key = await newKey();
  const hook = await receiver();
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  sender.child.kill('SIGKILL');
  await until(() => sender.child.exitCode !== null || sender.child.signalCode !== null, 'the sender died');
  const jobId = await queueJob(key);
  await sleep(500);
  sender = await startSender(s.stack.nats, settings);

  const [request] = await hook.untilCount(1);
  const payload = verifyWebhook(endpoint.secret, request!);
  assert.equal(payload.data.job_id, jobId);
  await sleep(1000);
  assert.equal(hook.requests.length, 1);
});

test('two sender replicas deliver each event once to each endpoint', async () => {
  const replica = await startSender(s.stack.nats, settings);
  try {
    const key = await newKey();
    const [one, two] = [await receiver(), await receiver()];
    const first = await registerEndpoint(s.gateway, key, { url: one.url });
    const second = await registerEndpoint(s.gateway, key, { url: two.url });

    const jobs = 8;
    const tests = 5;
    for (let i = 0; i < jobs; i++) await cancelJob(key, await queueJob(key));
    for (let i = 0; i < tests; i++) await sendTestEvent(s.gateway, key, first.id);

    // Each job: queued and canceled; the test events go to the first endpoint only.
    await one.untilCount(2 * jobs + tests);
    await two.untilCount(2 * jobs);
    await sleep(2000);
    for (const [hook, endpoint, expected] of [
      [one, first, 2 * jobs + tests],
      [two, second, 2 * jobs],
    ] as const) {
      assert.equal(hook.requests.length, expected, JSON.stringify(hook.requests.map(summary)));
      assert.equal(new Set(hook.ids()).size, expected, 'no webhook-id twice');
      for (const request of hook.requests) verifyWebhook(endpoint.secret, request);
    }
    const types = (hook: Receiver) => hook.requests.map(typeOf).sort();
    assert.deepEqual(
      types(one).filter((t) => t !== 'webhook.test'),
      types(two),
    );
  } finally {
    await replica.stop();
  }
});

test("a key's twenty hanging endpoints do not hold up another key's deliveries", async () => {
  const [hoarder, bystander] = [await newKey(), await newKey()];
  const hanging = await receiver();
  hanging.script = () => ({ hold: true });
  const fast = await receiver();
  try {
    // A key's every endpoint hangs, each with more deliveries than its share of attempts in flight.
    const endpoints = [];
    for (let i = 0; i < 20; i++)
      endpoints.push(await registerEndpoint(s.gateway, hoarder, { url: hanging.url }));
    for (let round = 0; round < 5; round++) {
      for (const endpoint of endpoints) await sendTestEvent(s.gateway, hoarder, endpoint.id);
    }
    // The sender is as busy with them as it will let itself be.
    let held = 0;
    await until(async () => {
      const before = hanging.requests.length;
      await sleep(300);
      held = hanging.requests.length;
      return held > 0 && held === before;
    }, 'the hanging endpoints hold every attempt they were given');

    const mine = await registerEndpoint(s.gateway, bystander, { url: fast.url });
    const sentAt = Date.now();
    await sendTestEvent(s.gateway, bystander, mine.id);
    const [request] = await fast.untilCount(1);
    const waited = request!.receivedAt - sentAt;
    assert.ok(waited < 2000, `another key's test event took ${waited} ms while ${held} attempts hung`);
  } finally {
    // Give the hanging attempts an answer, so later tests find the sender idle.
    hanging.script = () => ({ status: 200 });
    hanging.release();
  }
});

test('a rotated secret signs beside the old one during its grace, and alone after it', async () => {
  const key = await newKey();
  const hook = await receiver();
  const endpoint = await registerEndpoint(s.gateway, key, { url: hook.url, events: QUEUED_ONLY });
  // Long enough for one delivery to land inside it on a busy machine; short for the test.
  const graceSeconds = 3;
  const rotatedAt = Date.now();
  const rotated = await rotateSecret(s.gateway, key, endpoint.id, graceSeconds);
  assert.equal(rotated.id, endpoint.id);
  assert.match(rotated.secret, /^whsec_/);
  assert.notEqual(rotated.secret, endpoint.secret);

  await queueJob(key);
  const [during] = await hook.untilCount(1);
  assert.ok(
    during!.receivedAt - rotatedAt < graceSeconds * 1000,
    `delivered ${during!.receivedAt - rotatedAt} ms after the rotation: too late to test the grace`,
  );
  const signatures = during!.signature.split(' ');
  assert.equal(signatures.length, 2, `two signatures during the grace: ${during!.signature}`);
  for (const signature of signatures) {
    assert.match(signature, /^v1,/);
    const byOld = verifies(endpoint.secret, during!, signature);
    const byNew = verifies(rotated.secret, during!, signature);
    assert.ok(byOld !== byNew, `each signature is one secret's: ${signature}`);
  }
  assert.ok(verifies(endpoint.secret, during!), 'a receiver with the old secret accepts it');
  assert.ok(verifies(rotated.secret, during!), 'a receiver with the new secret accepts it');

  await sleep(rotatedAt + graceSeconds * 1000 + 500 - Date.now());
  await queueJob(key);
  const [, afterGrace] = await hook.untilCount(2);
  assert.equal(afterGrace!.signature.split(' ').length, 1, afterGrace!.signature);
  assert.ok(verifies(rotated.secret, afterGrace!), 'the new secret signs');
  assert.ok(!verifies(endpoint.secret, afterGrace!), 'the old secret no longer does');
});
