// What the job system promises when things break: a worker killed mid-job → the job
// is redelivered and finishes exactly once; a job that keeps failing → attempts_exhausted; NATS
// restarted while jobs wait → nothing lost; and the avatar back-end against a fake D-ID Talks API
// speaking its wire format, through its success and failure modes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalObjectStore, inputKey } from '@switchboard/objectstore';
import { connect, type NatsConnection } from 'nats';
import {
  acceptedJobId,
  probeResult,
  runJob,
  dataUrl,
  makeFixtures,
  startAnimationStack,
  submit,
  waitForJob,
  type AnimationStack,
  type Fixtures,
} from '../support/animation.js';
import { startFakeDid, type FakeDid } from '@switchboard/devcluster';

let s: AnimationStack;
let fx: Fixtures;
let vendor: FakeDid;
let nc: NatsConnection;
const events: { subject: string; job_id: string }[] = [];

before(async () => {
  [s, fx, vendor] = await Promise.all([
    startAnimationStack({
      workerEnv: { ANIMATION_MAX_ATTEMPTS: '2', ANIMATION_VIDEO_DIFFUSION_STEPS: '25' },
    }),
    makeFixtures(),
    startFakeDid(),
  ]);
  nc = await connect({ ...s.stack.nats.connectOptions('operator'), maxReconnectAttempts: -1 });
  const sub = nc.subscribe('switchboard.events.animate.job.>');
  void (async () => {
    for await (const msg of sub) {
      const body = JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string };
      events.push({ subject: msg.subject.split('.').pop()!, job_id: body.job_id });
    }
  })();
});

after(async () => {
  await nc?.close();
  await s?.stop();
  await vendor?.close();
  await fx?.remove();
});

const image = () => dataUrl('image/png', fx.png);
const eventsOf = (jobId: string) => events.filter((e) => e.job_id === jobId).map((e) => e.subject);

// A job's status is read from its record, which can be written before its event reaches this
// subscriber: wait for the terminal event, then a little longer so a duplicate would show.
async function settledEventsOf(jobId: string, terminal: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  while (!eventsOf(jobId).includes(terminal) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  return eventsOf(jobId);
}

test('kill -9 of a worker mid-job: redelivered to another worker and finished exactly once', async () => {
  const { key } = await s.key();
  const first = await s.startWorker();
  const jobId = await acceptedJobId(
    await submit(s.gateway, key, {
      backend: 'video-diffusion',
      image: image(),
      fps: 60,
      duration_s: 6,
      seed: 5,
    }),
  );
  await waitForJob(s.gateway, key, jobId, (j) => j.status === 'running' && j.progress > 0.05);
  first.child.kill('SIGKILL');
  const second = await s.startWorker();
  const done = await waitForJob(s.gateway, key, jobId, undefined, 120_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.attempts, 2);
  assert.equal(done.result?.frames, 360);
  assert.equal((await probeResult(s.gateway, key, done)).frames, 360);
  const seen = await settledEventsOf(jobId, 'succeeded');
  assert.deepEqual(
    seen.filter((e) => e !== 'running'),
    ['queued', 'succeeded'],
  );
  assert.equal(seen.filter((e) => e === 'running').length, 2);
  await second.stop();
});

test('a job that keeps failing ends failed with attempts_exhausted naming the last error', async () => {
  const { key } = await s.key();
  // No worker runs: the job waits while its stored input disappears under it.
  const jobId = await acceptedJobId(
    await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 2, duration_s: 1 }),
  );
  await new LocalObjectStore(s.objectsDir).delete(inputKey(jobId, 'image'));
  const worker = await s.startWorker();
  const failed = await waitForJob(s.gateway, key, jobId, undefined, 60_000);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error?.code, 'attempts_exhausted');
  assert.equal(failed.attempts, 2);
  assert.match(failed.error?.message ?? '', /no longer stored/);
  assert.doesNotMatch(failed.error?.message ?? '', /\/tmp\//, 'no paths in a public message');
  assert.deepEqual(
    (await settledEventsOf(jobId, 'failed')).filter((e) => e === 'failed'),
    ['failed'],
  );
  await worker.stop();
});

test('NATS restarted while jobs wait: nothing is lost, and they finish once a worker comes', async () => {
  const { key } = await s.key('enterprise');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(
      await acceptedJobId(
        await submit(s.gateway, key, {
          backend: 'video-diffusion',
          image: image(),
          fps: 2,
          duration_s: 1,
          seed: i,
        }),
      ),
    );
  }
  await s.stack.nats.restart();
  const worker = await s.startWorker();
  for (const id of ids) {
    const done = await waitForJob(s.gateway, key, id, undefined, 90_000);
    assert.equal(done.status, 'succeeded', `${id}: ${JSON.stringify(done.error)}`);
  }
  await worker.stop();
});

test('avatar jobs are refused with 503 once the workers say the vendor is not configured', async () => {
  const worker = await s.startWorker({ ANIMATION_BACKENDS: 'avatar' });
  const { key } = await s.key();
  const res = await submit(s.gateway, key, { backend: 'avatar', image: image(), text: 'hi' });
  assert.equal(res.status, 503);
  await worker.stop();
});

test('avatar through the fake D-ID Talks API: audio and text succeed; vendor refusals fail the job clearly', async () => {
  const avatarWorker = (deadlineMs: number) =>
    s.startWorker({
      ANIMATION_BACKENDS: 'avatar',
      AVATAR_BASE_URL: vendor.url,
      AVATAR_API_KEY: vendor.apiKey,
      AVATAR_POLL_INTERVAL_MS: '50',
      AVATAR_DEADLINE_MS: String(deadlineMs),
    });
  // The fake renders each talk's video with ffmpeg, which takes seconds on a loaded machine: the
  // deadline is generous here, and short only for the talk that never ends (below).
  const worker = await avatarWorker(30_000);
  const { key } = await s.key();
  const spoken = await runJob(s.gateway, key, {
    backend: 'avatar',
    image: image(),
    audio: dataUrl('audio/wav', fx.wav),
    fps: 25,
  });
  assert.equal(spoken.status, 'succeeded', JSON.stringify(spoken.error));
  const probe = await probeResult(s.gateway, key, spoken);
  assert.deepEqual(
    { codec: probe.codec, pixFmt: probe.pixFmt, fps: probe.fps, frames: probe.frames, audio: probe.audio },
    {
      codec: 'h264',
      pixFmt: 'yuv420p',
      fps: 25,
      frames: 25,
      audio: true,
    },
  );
  assert.ok(vendor.requests.some((r) => r.method === 'POST' && r.path === '/talks' && r.auth === 'ok'));

  const texted = await runJob(s.gateway, key, {
    backend: 'avatar',
    image: image(),
    text: 'Hello there',
    voice: 'en-US-GuyNeural',
  });
  assert.equal(texted.status, 'succeeded', JSON.stringify(texted.error));

  const outcomes: [Partial<Parameters<FakeDid['set']>[0]>, string][] = [
    [{ unauthorized: true }, 'upstream_failed'],
    [{ validationError: true }, 'upstream_failed'],
    [{ outcome: 'rejected' }, 'upstream_failed'],
    [{ outcome: 'error' }, 'upstream_failed'],
  ];
  for (const [mode, code] of outcomes) {
    vendor.set({ unauthorized: false, validationError: false, outcome: 'done', ...mode });
    const job = await runJob(s.gateway, key, { backend: 'avatar', image: image(), text: 'x' }, 30_000);
    assert.equal(job.status, 'failed', JSON.stringify(mode));
    assert.equal(job.error?.code, code, JSON.stringify(mode));
    assert.equal(job.attempts, 1, 'a vendor refusal is not retried');
    assert.doesNotMatch(job.error?.message ?? '', new RegExp(vendor.apiKey));
  }
  vendor.set({ outcome: 'done', serverErrors: 2, rateLimited: 1 });
  const recovered = await runJob(
    s.gateway,
    key,
    { backend: 'avatar', image: image(), text: 'retry me' },
    30_000,
  );
  assert.equal(recovered.status, 'succeeded', JSON.stringify(recovered.error));
  await worker.stop();

  const impatient = await avatarWorker(3_000);
  vendor.set({ outcome: 'never', serverErrors: 0, rateLimited: 0 });
  const stalled = await runJob(s.gateway, key, { backend: 'avatar', image: image(), text: 'x' }, 30_000);
  assert.equal(stalled.status, 'failed');
  assert.equal(stalled.error?.code, 'upstream_timeout');
  assert.equal(stalled.attempts, 1, 'a talk past its deadline is not retried');
  await impatient.stop();
});
