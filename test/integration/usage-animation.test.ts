// The animation meters: video_seconds and video_frames of each succeeded job under its back-end
// as the model, exactly as the job's result reports them; failed and canceled jobs (queued or
// running) count nothing; a job whose worker is killed mid-job and which is redelivered to
// another worker counts once. Real NATS/JetStream, real animation workers, a real usage store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { LocalObjectStore, inputKey } from '@switchboard/objectstore';
import { bearer } from '../support/admin.js';
import {
  acceptedJobId,
  dataUrl,
  makeFixtures,
  startAnimationStack,
  submit,
  waitForJob,
  type AnimationStack,
  type Fixtures,
  type JobView,
} from '../support/animation.js';
import { sleep } from '../support/stack.js';
import { untilTotals, usageAroundToday } from '../support/usage.js';

let s: AnimationStack;
let fx: Fixtures;

before(async () => {
  [s, fx] = await Promise.all([
    startAnimationStack({ workerEnv: { ANIMATION_MAX_ATTEMPTS: '2' } }),
    makeFixtures(),
  ]);
});
after(async () => {
  await s?.stop();
  await fx?.remove();
});

const image = () => dataUrl('image/png', fx.png);
const usageOf = (key: string) => () => usageAroundToday(s.gateway, key);

function expectedFor(jobs: JobView[]): Record<string, number> {
  const expected: Record<string, number> = {};
  for (const job of jobs) {
    const frames = `animation/${job.backend}/video_frames`;
    const seconds = `animation/${job.backend}/video_seconds`;
    expected[frames] = (expected[frames] ?? 0) + job.result!.frames;
    expected[seconds] = (expected[seconds] ?? 0) + job.result!.duration_s;
  }
  return expected;
}

/** Totals reached, and still the same a moment later, when a late or duplicate record would show. */
async function settledTotals(key: string, expected: Record<string, number>): Promise<void> {
  await untilTotals(usageOf(key), expected);
  await sleep(1500);
  // One more read, with no waiting: it must still match exactly.
  await untilTotals(usageOf(key), expected, 0);
}

test('succeeded jobs count their frames and seconds per back-end; failed and canceled ones nothing', async () => {
  const { key } = await s.key();
  const cancel = (jobId: string) =>
    fetch(`${s.gateway.url}/animate/${jobId}`, { method: 'DELETE', headers: bearer(key) });

  // No worker runs yet: one job canceled while queued, one whose stored input is gone (it fails).
  const queued = await acceptedJobId(
    await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 4, duration_s: 1 }),
  );
  assert.equal(((await (await cancel(queued)).json()) as JobView).status, 'canceled');
  const doomed = await acceptedJobId(
    await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 4, duration_s: 1 }),
  );
  await new LocalObjectStore(s.objectsDir).delete(inputKey(doomed, 'image'));

  const worker = await s.startWorker();
  const failed = await waitForJob(s.gateway, key, doomed);
  assert.equal(failed.status, 'failed');

  // One canceled while running.
  const long = await acceptedJobId(
    await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 30, duration_s: 8 }),
  );
  await waitForJob(s.gateway, key, long, (j) => j.status === 'running' && j.progress > 0);
  assert.equal(((await (await cancel(long)).json()) as JobView).status, 'canceled');

  const video = await waitForJob(
    s.gateway,
    key,
    await acceptedJobId(
      await submit(s.gateway, key, { backend: 'video-diffusion', image: image(), fps: 6, duration_s: 1.5 }),
    ),
    undefined,
    120_000,
  );
  assert.equal(video.status, 'succeeded', JSON.stringify(video.error));
  assert.equal(video.result?.frames, 9);
  const portrait = await waitForJob(
    s.gateway,
    key,
    await acceptedJobId(
      await submit(s.gateway, key, {
        backend: 'portrait',
        image: image(),
        audio: dataUrl('audio/wav', fx.wav),
        fps: 5,
      }),
    ),
    undefined,
    120_000,
  );
  assert.equal(portrait.status, 'succeeded', JSON.stringify(portrait.error));

  await settledTotals(key, expectedFor([video, portrait]));
  await worker.stop();
});

test('a job redelivered after its worker is killed mid-job counts once', async () => {
  const { key } = await s.key();
  const first = await s.startWorker({ ANIMATION_VIDEO_DIFFUSION_STEPS: '25' });
  const jobId = await acceptedJobId(
    await submit(s.gateway, key, {
      backend: 'video-diffusion',
      image: image(),
      fps: 30,
      duration_s: 4,
      seed: 3,
    }),
  );
  await waitForJob(s.gateway, key, jobId, (j) => j.status === 'running' && j.progress > 0.05);
  first.child.kill('SIGKILL');
  const second = await s.startWorker();
  const done = await waitForJob(s.gateway, key, jobId, undefined, 120_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.attempts, 2, 'redelivered once');
  assert.equal(done.result?.frames, 120);
  await settledTotals(key, expectedFor([done]));
  await second.stop();
});
