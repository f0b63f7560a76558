// NATS going away under load, as an operator or a node would make it: restarted with its data
// kept (same store, same port), and frozen with SIGSTOP for 5 s and for 60 s. What users see is
// what the docs promise (cached keys within KEYS_MAX_STALENESS_MS, 503 unavailable with
// Retry-After where a call needs NATS, /readyz 503 while it is away), nothing is lost (keys,
// queued jobs finishing exactly once, stored images and screenshots, usage, webhook deliveries),
// and every process of ours recovers without being restarted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, type CreatedKey } from '../support/admin.js';
import { acceptedJobId, submit, waitForJob } from '../support/animation.js';
import { startFaultCluster, type FaultCluster } from '../support/fault-cluster.js';
import { errorOf, sleep, until } from '../support/stack.js';
import { untilUsage, usageAroundToday } from '../support/usage.js';
import {
  registerEndpoint,
  startReceiver,
  typeOf,
  type Receiver,
  type WebhookPayload,
} from '../support/webhooks.js';

/** The default: how long a replica vouches for keys after NATS last answered. */
const STALENESS_MS = 30_000;
/** A call that has not answered in this long is hung, whatever the fault. */
const HUNG_MS = 20_000;

let cluster: FaultCluster;
let receiver: Receiver;

before(async () => {
  [cluster, receiver] = await Promise.all([
    startFaultCluster({ workers: ['llm', 'diffusion', 'animation', 'browser', 'webhooks'] }),
    startReceiver(),
  ]);
});

after(async () => {
  cluster?.nats.resume();
  await cluster?.stop();
  await receiver?.close();
});

interface Outcome {
  what: string;
  /** 0: no answer within HUNG_MS, or the connection failed. */
  status: number;
  code?: string;
  retryAfter: string | null;
  startedAt: number;
}

/** Calls `call` again and again (one at a time) until stopped, recording every answer. */
function keepCalling(what: string, call: (signal: AbortSignal) => Promise<Response>) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const startedAt = Date.now();
      try {
        const res = await call(AbortSignal.timeout(HUNG_MS));
        const code = res.status >= 400 ? (await errorOf(res)).code : (await res.arrayBuffer(), undefined);
        outcomes.push({
          what,
          status: res.status,
          code,
          retryAfter: res.headers.get('retry-after'),
          startedAt,
        });
      } catch {
        outcomes.push({ what, status: 0, retryAfter: null, startedAt });
      }
      await sleep(200);
    }
  })();
  return {
    outcomes,
    async stop() {
      running = false;
      await loop;
      return outcomes;
    },
  };
}

/** Every answer is a success or the documented 503 unavailable with Retry-After: no 5xx else, no hang. */
function assertOnlyDocumented(outcomes: Outcome[], success: number) {
  for (const o of outcomes) {
    if (o.status === success) continue;
    assert.equal(o.status, 503, `${o.what}: ${o.status} ${o.code ?? ''}`);
    assert.equal(o.code, 'unavailable', `${o.what}: 503 ${o.code}`);
    assert.match(o.retryAfter ?? '', /^\d+$/, `${o.what}: 503 without Retry-After`);
  }
}

const gatewayAt = (i: number) => cluster.gateways[i % cluster.gateways.length]!;
const readyStatus = async (i: number) =>
  (await fetch(`${gatewayAt(i).url}/readyz`, { signal: AbortSignal.timeout(HUNG_MS) })).status;

/** What one test puts through the cluster before the fault, to check nothing of it is lost. */
interface Before {
  key: CreatedKey;
  imageUrl: string;
  screenshotUrl: string;
  /** A browser session left open through the fault. */
  sessionId: string;
  jobIds: string[];
}

async function workBeforeTheFault(): Promise<Before> {
  const key = await cluster.createKey({ tier: 'enterprise', rate_limit_per_minute: 100_000 });
  // A key reaches each replica through its key watch, which a previous fault may still be resuming.
  for (const { url } of cluster.gateways)
    await until(
      async () => (await fetch(`${url}/models`, { headers: bearer(key.key) })).status === 200,
      `the new key works on ${url}`,
    );
  const gateway = gatewayAt(0);
  await registerEndpoint(gateway, key.key, { url: receiver.url, events: ['animate.job.*'] });
  const post = (path: string, body: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const image = await post('/generate-image', {
    prompt: 'a lighthouse',
    width: 64,
    height: 64,
    steps: 2,
    seed: 1,
  });
  assert.equal(image.status, 200, await image.clone().text());
  const imageUrl = ((await image.json()) as { url: string }).url;
  const session = await post('/api/browser/session/create', {});
  assert.equal(session.status, 201, await session.clone().text());
  const sessionId = ((await session.json()) as { session_id: string }).session_id;
  const capture = await post(`/api/browser/session/${sessionId}/capture`, {});
  assert.equal(capture.status, 200, await capture.clone().text());
  const screenshotUrl = ((await capture.json()) as { url: string }).url;
  const jobIds: string[] = [];
  for (const seed of [1, 2]) {
    const body = { backend: 'video-diffusion', image: imageUrl, fps: 6, duration_s: 1, seed };
    jobIds.push(await acceptedJobId(await submit(gatewayAt(seed), key.key, body)));
  }
  return { key, imageUrl, screenshotUrl, sessionId, jobIds };
}

/**
 * The load during the fault, on both gateways: completions and a stored image (which need no NATS
 * once the key is cached), a job's state and a session's details (which do).
 */
function loadDuringTheFault(work: Before) {
  let turn = 0;
  const next = () => gatewayAt(turn++);
  const auth = bearer(work.key.key);
  return [
    keepCalling('llm', (signal) =>
      fetch(`${next().url}/query`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'hello', max_tokens: 4, temperature: 0 }),
        signal,
      }),
    ),
    keepCalling('image', (signal) => fetch(`${next().url}${work.imageUrl}`, { headers: auth, signal })),
    keepCalling('job', (signal) =>
      fetch(`${next().url}/animate/${work.jobIds[0]}`, { headers: auth, signal }),
    ),
    keepCalling('session', (signal) =>
      fetch(`${next().url}/api/browser/session/${work.sessionId}/details`, { headers: auth, signal }),
    ),
  ];
}

/** A call that needs NATS, made while it is away: 503 unavailable with Retry-After, at once. */
async function assertRefusedWhileAway(work: Before) {
  const started = Date.now();
  const job = await submit(gatewayAt(0), work.key.key, {
    backend: 'video-diffusion',
    image: work.imageUrl,
    fps: 6,
    duration_s: 1,
    seed: 9,
  });
  assert.equal(job.status, 503, await job.clone().text());
  assert.equal((await errorOf(job)).code, 'unavailable');
  assert.match(
    job.headers.get('retry-after') ?? '',
    /^\d+$/,
    'a job refused while NATS is away says when to retry',
  );
  const keys = await cluster.admin('GET', '/keys');
  assert.equal(keys.status, 503);
  assert.match(keys.headers.get('retry-after') ?? '', /^\d+$/, 'admin calls say when to retry');
  assert.ok(Date.now() - started < HUNG_MS, 'calls that need NATS answer rather than hang');
}

/** Once NATS is back: both gateways ready, the key works, the admin API and jobs answer, nothing lost. */
async function assertRecovered(work: Before, llmServed: number) {
  for (const i of [0, 1])
    await until(async () => (await readyStatus(i)) === 200, `gateway ${i + 1} ready again`);
  const auth = bearer(work.key.key);
  for (const i of [0, 1]) {
    const res = await fetch(`${gatewayAt(i).url}/query`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'again', max_tokens: 4, temperature: 0 }),
    });
    assert.equal(res.status, 200, `the key works on gateway ${i + 1}: ${await res.text()}`);
  }
  assert.equal((await cluster.admin('GET', '/keys')).status, 200, 'the admin API answers');

  // Jobs submitted before the fault finish, each exactly once (one terminal event, one delivery id).
  let frames = 0;
  for (const jobId of work.jobIds) {
    const job = await waitForJob(gatewayAt(0), work.key.key, jobId, undefined, 120_000).catch(
      (error: Error) => {
        const worker = cluster.worker('animation');
        const state = worker.running ? 'running' : 'exited';
        throw new Error(`${error.message}\nanimation worker (${state}):\n${worker.output().slice(-4000)}`);
      },
    );
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    frames += job.result!.frames;
    const video = await fetch(`${gatewayAt(1).url}${job.result!.url}`, { headers: auth });
    assert.equal(video.status, 200, 'the video is stored');
  }
  const succeededDeliveries = (jobId: string) =>
    new Set(
      receiver.requests
        .filter((r) => typeOf(r) === 'animate.job.succeeded')
        .filter((r) => (JSON.parse(r.body) as WebhookPayload).data['job_id'] === jobId)
        .map((r) => r.id),
    );
  for (const jobId of work.jobIds) {
    await until(() => succeededDeliveries(jobId).size > 0, `the webhook for ${jobId}`);
  }
  await sleep(1000); // a duplicate would show by now
  for (const jobId of work.jobIds)
    assert.equal(succeededDeliveries(jobId).size, 1, `${jobId} succeeded once`);

  const close = await fetch(`${gatewayAt(1).url}/api/browser/session/${work.sessionId}/close`, {
    method: 'POST',
    headers: auth,
  });
  assert.equal(close.status, 200, 'the session opened before the fault is still there');
  for (const url of [work.imageUrl, work.screenshotUrl]) {
    const res = await fetch(`${gatewayAt(1).url}${url}`, { headers: auth });
    assert.equal(res.status, 200, `${url} is still stored`);
    assert.equal(res.headers.get('content-type'), 'image/png');
  }

  // Usage: every completion served (the load's and the two above), the image, the jobs' frames.
  const served = llmServed + 2;
  await untilUsage(
    () => usageAroundToday(gatewayAt(0), work.key.key),
    (seen) =>
      sum(seen, /^llm\/.*\/requests$/) === served &&
      sum(seen, /^diffusion\/.*\/images$/) === 1 &&
      sum(seen, /^animation\/.*\/video_frames$/) === frames,
    `${served} llm requests, 1 image, ${frames} video frames`,
  );
}

const sum = (seen: Record<string, number>, name: RegExp) =>
  Object.entries(seen)
    .filter(([k]) => name.test(k))
    .reduce((total, [, v]) => total + v, 0);

/** Calls that need nothing from NATS once the key is cached. */
const servedFromCache = (o: Outcome) => o.what === 'llm' || o.what === 'image';

/** Runs the load around `fault`, then checks what it saw and the recovery. */
async function underLoad(fault: (work: Before) => Promise<void>, check: (outcomes: Outcome[]) => void) {
  const work = await workBeforeTheFault();
  const load = loadDuringTheFault(work);
  await sleep(1000);
  try {
    await fault(work);
  } finally {
    cluster.nats.resume();
  }
  await sleep(2000);
  const outcomes = (await Promise.all(load.map((l) => l.stop()))).flat();
  assertOnlyDocumented(outcomes, 200);
  check(outcomes);
  await assertRecovered(work, outcomes.filter((o) => o.what === 'llm' && o.status === 200).length);
}

test('NATS restarted with its data kept: nothing lost, every process recovers on its own', async () => {
  await underLoad(
    async () => {
      await cluster.nats.restart();
      await sleep(3000);
    },
    (outcomes) => {
      const served = outcomes.filter(servedFromCache);
      assert.ok(
        served.every((o) => o.status === 200),
        'completions and stored files are served from the key cache throughout',
      );
    },
  );
});

test('NATS frozen for 5 s: unready, cached keys keep working, calls needing NATS are 503, then all recovers', async () => {
  await underLoad(
    async (work) => {
      cluster.nats.pause();
      const pausedAt = Date.now();
      await until(async () => (await readyStatus(0)) === 503, '/readyz 503 while NATS is frozen', 10_000);
      await assertRefusedWhileAway(work);
      await sleep(Math.max(0, pausedAt + 5000 - Date.now()));
    },
    (outcomes) => {
      const served = outcomes.filter(servedFromCache);
      assert.ok(
        served.every((o) => o.status === 200),
        'within the staleness bound keys keep authenticating',
      );
    },
  );
});

test('NATS frozen for 60 s: keys honoured until the staleness bound, then 503 with Retry-After; all recovers', async () => {
  let pausedAt = 0;
  await underLoad(
    async (work) => {
      cluster.nats.pause();
      pausedAt = Date.now();
      await until(async () => (await readyStatus(1)) === 503, '/readyz 503 while NATS is frozen', 10_000);
      await assertRefusedWhileAway(work);
      await sleep(Math.max(0, pausedAt + 60_000 - Date.now()));
    },
    (outcomes) => {
      const served = outcomes.filter(servedFromCache);
      const early = served.filter((o) => o.startedAt < pausedAt + STALENESS_MS - 5000);
      const late = served.filter(
        (o) => o.startedAt > pausedAt + STALENESS_MS + 2000 && o.startedAt < pausedAt + 58_000,
      );
      assert.ok(early.length > 0 && late.length > 0, 'the load ran through the pause');
      assert.ok(
        early.every((o) => o.status === 200),
        'inside the staleness bound keys keep authenticating',
      );
      assert.ok(
        late.every((o) => o.status === 503 && o.code === 'unavailable'),
        'past the bound no key is vouched for',
      );
    },
  );
});
