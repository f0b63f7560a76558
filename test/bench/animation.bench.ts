// pnpm bench:animation — the animation worker on the tiny development models, CPU, one ONNX Runtime
// intra-op thread:
//   (1) frames/s per back-end: in-process (the back-end rendering straight into the MP4 encoder, no
//       queue, no object store) beside the same clip submitted to the gateway and run by a warm
//       worker through the JetStream queue (202 → succeeded, polled every 20 ms);
//   (2) submit → running with a warm, idle worker, timed from the 202 to the worker's
//       `switchboard.events.animate.job.running` event;
//   (3) jobs/s the queue itself sustains: @switchboard/jobs against a real NATS, a JobBoard
//       submitting while JobTaker loops settle each job at once (no rendering).
// Numbers, not assertions.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, platform, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { startNats } from '@switchboard/devcluster';
import {
  JobBoard,
  JobTaker,
  jobNames,
  newJobId,
  type JobBoardOptions,
  type JobInputs,
  type JobParams,
  type JobResult,
} from '@switchboard/jobs';
import { videoKey } from '@switchboard/objectstore';
import type {
  Backend,
  ClipSpec,
  JobInputs as RenderInputs,
} from '@switchboard/animation/dist/backends/backend.js';
import { createPortraitBackend } from '@switchboard/animation/dist/backends/portrait/index.js';
import { createVideoDiffusionBackend } from '@switchboard/animation/dist/backends/video-diffusion/index.js';
import { Mp4Encoder } from '@switchboard/animation/dist/media/encode.js';
import { createLogger } from '@switchboard/telemetry';
import { bearer, createKey } from '../support/admin.js';
import { dataUrl, makeFixtures, startAnimationStack, submit, type JobView } from '../support/animation.js';
import { runTool } from '../support/processes.js';
import { sleep } from '../support/stack.js';
import { spawnGateway } from '../support/gateway.js';
import { percentile } from './stats.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const latencyJobs = Number(process.env.BENCH_LATENCY_JOBS ?? 40);
const queueJobs = Number(process.env.BENCH_QUEUE_JOBS ?? 500);
const queueTakers = [1, 4];
const submitters = 8;
/** The worker's test setting (startAnimationStack), given to both sides explicitly. */
const steps = 4;
/** video-diffusion clips: 48 frames (2 s at 24 fps) at each of these squares (64 = the model's native size). */
const videoSides = [64, 256];
/** ANIMATION_ENCODER_THREADS' default, given to both sides explicitly. */
const encoderThreads = 2;
const pollMs = Number(process.env.BENCH_POLL_MS ?? 20);
/** A warm worker is idle, waiting on its pull, when the next job comes. */
const gapMs = 100;
/** (2)'s short jobs: 4 frames at 64×64. */
const shortJob = { backend: 'video-diffusion', fps: 8, duration_s: 0.5, width: 64, height: 64, seed: 3 };

const ffmpeg = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };
const execution = { providers: ['cpu'] as const, deviceId: 0, intraOpThreads: 1 };
const logger = createLogger({ service: 'animation-bench', level: 'error' });
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A driving video of 2 s at 25 fps with a tone, as a phone would record one (H.264 + AAC). */
async function drivingVideo(dir: string): Promise<string> {
  const path = join(dir, 'bench-driving.mp4');
  await runTool('ffmpeg', [
    ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=160x160:rate=25:duration=2'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=220:duration=2'],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', path],
  ]);
  return path;
}

interface Clip {
  backend: 'video-diffusion' | 'portrait';
  /** What POST /animate gets. */
  body: Record<string, unknown>;
  /** The same job as the worker hands it to the back-end (the gateway's defaults filled in). */
  params: Parameters<Backend['render']>[0]['params'];
  inputs: RenderInputs;
}

interface Timed {
  seconds: number;
  frames: number;
  spec?: ClipSpec;
  /** Through the queue: the worker's own time for the attempt (inputs, render, encode, probe, store). */
  attemptSeconds?: number;
}

/** Render + encode in this process, as the worker's runner drives a back-end, minus queue and store. */
async function renderInProcess(backend: Backend, clip: Clip): Promise<Timed> {
  const workDir = await mkdtemp(join(tmpdir(), 'sb-bench-render-'));
  try {
    const signal = new AbortController().signal;
    const started = performance.now();
    const encoder = new Mp4Encoder(join(workDir, 'video.mp4'), {
      paths: ffmpeg,
      threads: encoderThreads,
      signal,
      poster: join(workDir, 'poster.jpg'),
    });
    await backend.render(
      {
        jobId: 'bench',
        params: clip.params,
        inputs: clip.inputs,
        workDir,
        signal,
        progress: () => {},
        logger,
      },
      encoder,
    );
    const spec = await encoder.finished();
    return { seconds: (performance.now() - started) / 1000, frames: spec.frames, spec };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Job events as the worker and gateway publish them, timed when they reach this process. */
class EventClock {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();

  constructor(nc: NatsConnection) {
    const sub = nc.subscribe('switchboard.events.animate.job.*');
    void (async () => {
      for await (const msg of sub) {
        const at = performance.now();
        const status = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
        const { job_id } = JSON.parse(new TextDecoder().decode(msg.data)) as { job_id: string };
        const name = `${job_id} ${status}`;
        this.seen.set(name, at);
        this.waiters.get(name)?.(at);
      }
    })();
  }

  /** When `status` of the job was seen (now or later). */
  at(jobId: string, status: string, timeoutMs = 60_000): Promise<number> {
    const name = `${jobId} ${status}`;
    const seen = this.seen.get(name);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${status} event for ${jobId}`)), timeoutMs);
      this.waiters.set(name, (at) => {
        clearTimeout(timer);
        this.waiters.delete(name);
        resolve(at);
      });
    });
  }
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()}, Node ${process.version}`;

/** Other work on the machine (a shared checkout) shows in the load average before the bench starts. */
const loadBefore = loadavg()[0]!;
const fx = await makeFixtures();
const driving = await drivingVideo(fx.dir);
const imagePath = join(fx.dir, 'image.png');
const s = await startAnimationStack({
  gatewayEnv: { LOG_LEVEL: 'error' },
  workerEnv: { LOG_LEVEL: 'error' },
  // A gateway process of its own, as deployed: what is measured through it is not this process's.
  startGateway: spawnGateway,
});
const frameRows = [];
const latencyRows = [];
const queueRows = [];
const backends: Backend[] = [];
let nc: NatsConnection | undefined;
try {
  const worker = await s.startWorker({
    ORT_INTRA_OP_THREADS: '1',
    ANIMATION_VIDEO_DIFFUSION_STEPS: String(steps),
    ANIMATION_ENCODER_THREADS: String(encoderThreads),
  });
  const { key } = await createKey(s.gateway, { tier: 'enterprise', rate_limit_per_minute: 1_000_000 });
  const image = dataUrl('image/png', await readFile(imagePath));
  const defaults = { motion_bucket_id: 127, noise_aug_strength: 0.02 };

  const submitJob = async (body: Record<string, unknown>): Promise<{ jobId: string; accepted: number }> => {
    const res = await submit(s.gateway, key, body);
    const accepted = performance.now();
    if (res.status !== 202) throw new Error(`POST /animate: ${res.status} ${await res.text()}`);
    return { jobId: ((await res.json()) as { job_id: string }).job_id, accepted };
  };

  /** The worker's animation_job_duration_seconds of succeeded attempts: [sum, count]. */
  const attemptTotals = async (backend: string) => {
    const labels = { backend, outcome: 'succeeded' };
    return [
      await worker.metric('animation_job_duration_seconds_sum', labels),
      await worker.metric('animation_job_duration_seconds_count', labels),
    ] as const;
  };

  /** 202 → succeeded, polling GET /animate/:id every `pollMs`. */
  const throughQueue = async (clip: Clip): Promise<Timed> => {
    const [sumBefore, countBefore] = await attemptTotals(clip.backend);
    const { jobId, accepted } = await submitJob(clip.body);
    let timed: Timed | undefined;
    while (!timed) {
      const res = await fetch(`${s.gateway.url}/animate/${jobId}`, { headers: bearer(key) });
      const job = (await res.json()) as JobView;
      if (job.status === 'succeeded') {
        timed = { seconds: (performance.now() - accepted) / 1000, frames: job.result!.frames };
      } else if (job.status !== 'queued' && job.status !== 'running') {
        throw new Error(`job ${job.status}: ${JSON.stringify(job.error)}`);
      } else await sleep(pollMs);
    }
    // The worker observes the attempt's duration just after the job shows succeeded.
    for (;;) {
      const [sum, count] = await attemptTotals(clip.backend);
      if (count > countBefore) return { ...timed, attemptSeconds: sum - sumBefore };
      await sleep(pollMs);
    }
  };

  // (1) frames/s, in-process against through the queue, runs interleaved so drift hits both alike.
  const videoClip = (side: number): Clip => {
    const params = { fps: 24, duration_s: 2, width: side, height: side, seed: 7 };
    return {
      backend: 'video-diffusion',
      body: { backend: 'video-diffusion', image, ...params },
      params: { ...params, ...defaults },
      inputs: { image: imagePath },
    };
  };
  const clips: Clip[] = [
    ...videoSides.map(videoClip),
    {
      backend: 'portrait',
      body: {
        backend: 'portrait',
        image,
        driving_video: dataUrl('video/mp4', await readFile(driving)),
        seed: 7,
      },
      params: { seed: 7, ...defaults },
      inputs: { image: imagePath, drivingVideo: driving },
    },
  ];
  const build = {
    'video-diffusion': () =>
      createVideoDiffusionBackend({ modelDir: s.modelDir, steps, execution, ffmpeg, logger }),
    portrait: () => createPortraitBackend({ modelDir: s.modelDir, execution, ffmpeg, logger }),
  };
  const loaded = new Map<Clip['backend'], Backend>();
  for (const clip of clips) {
    let backend = loaded.get(clip.backend);
    if (!backend) {
      backend = build[clip.backend]();
      loaded.set(clip.backend, backend);
      backends.push(backend);
      await backend.ready();
    }
    const first = await renderInProcess(backend, clip); // warm-up: JIT, ORT arenas, page cache
    await throughQueue(clip);
    const local: number[] = [];
    const queued: number[] = [];
    const attempts: number[] = [];
    for (let i = 0; i < runs; i++) {
      local.push((await renderInProcess(backend, clip)).seconds);
      const viaQueue = await throughQueue(clip);
      if (viaQueue.frames !== first.frames) {
        throw new Error(`queue gave ${viaQueue.frames} frames, not ${first.frames}`);
      }
      queued.push(viaQueue.seconds);
      attempts.push(viaQueue.attemptSeconds!);
    }
    const [localS, queueS] = [median(local), median(queued)];
    frameRows.push({
      'back-end': clip.backend,
      clip: `${first.frames} frames ${first.spec!.width}×${first.spec!.height} @ ${first.spec!.fps} fps`,
      'in-process s': localS.toFixed(3),
      'in-process frames/s': (first.frames / localS).toFixed(1),
      'queue s': queueS.toFixed(3),
      'queue frames/s': (first.frames / queueS).toFixed(1),
      'queue of in-process': `${((localS / queueS) * 100).toFixed(1)}%`,
      'worker attempt s': median(attempts).toFixed(3),
    });
  }
  await Promise.all(backends.splice(0).map((b) => b.dispose()));

  // (2) submit → running with a warm, idle worker; each job waits for the one before to finish.
  nc = await connect(s.stack.nats.connectOptions('operator'));
  const clock = new EventClock(nc);
  const samples = { accepted: [] as number[], running: [] as number[], postToRunning: [] as number[] };
  for (let i = -3; i < latencyJobs; i++) {
    await sleep(gapMs);
    const posted = performance.now();
    const { jobId, accepted } = await submitJob({ ...shortJob, image });
    const running = await clock.at(jobId, 'running');
    await clock.at(jobId, 'succeeded');
    if (i < 0) continue; // warm-up
    samples.running.push(running - accepted);
    samples.postToRunning.push(running - posted);
    samples.accepted.push(accepted - posted);
  }
  const row = (measure: string, values: number[]) => ({
    measure,
    'p50 ms': percentile(values, 50).toFixed(2),
    'p95 ms': percentile(values, 95).toFixed(2),
    'min ms': Math.min(...values).toFixed(2),
    'max ms': Math.max(...values).toFixed(2),
  });
  latencyRows.push(
    row('202 → running event', samples.running),
    row('POST sent → 202', samples.accepted),
    row('POST sent → running event', samples.postToRunning),
  );
} finally {
  await Promise.all(backends.map((b) => b.dispose()));
  await nc?.close();
  await s.stop();
}

// (3) The queue alone: a JobBoard (as one gateway) and JobTaker loops (as worker slots, each on its
// own connection) on a NATS of their own; every job is settled as soon as it is started.
const nats = await startNats();
const connections: NatsConnection[] = [];
try {
  const open = async () => {
    const c = await connect(nats.connectOptions('operator'));
    connections.push(c);
    return c;
  };
  /** test/ does not depend on @switchboard/events; this sends the same events the same way. */
  const eventsOn = (c: NatsConnection) =>
    ({
      publish: (event: string, body: Record<string, unknown>) =>
        c.publish(`switchboard.events.${event}`, JSON.stringify({ ...body, at: new Date().toISOString() })),
    }) as unknown as NonNullable<JobBoardOptions['events']>;
  const params: JobParams = {
    fps: 8,
    duration_s: 1,
    seed: 1,
    motion_bucket_id: 127,
    noise_aug_strength: 0.02,
  };
  const inputs: JobInputs = { image: 'animation-inputs/bench/image' };
  for (const takers of queueTakers) {
    const names = jobNames(`bench${takers}`);
    const settings = { ackWaitMs: 30_000, jobRetentionMs: 3_600_000, names };
    const boardNc = await open();
    const board = await JobBoard.open(boardNc, { ...settings, events: eventsOn(boardNc) });
    const takerSet = await Promise.all(
      Array.from({ length: takers }, async () => {
        const c = await open();
        return JobTaker.open(c, { ...settings, maxAttempts: 3, events: eventsOn(c) });
      }),
    );
    let completed = 0;
    let completedAt = 0;
    let submitFailed = false;
    const started = performance.now();
    const loops = takerSet.map(async (taker) => {
      while (completed < queueJobs && !submitFailed) {
        const msg = await taker.next('video-diffusion', 1000);
        if (!msg) continue;
        const attempt = await taker.start(msg);
        if (!attempt) continue;
        const result: JobResult = {
          video_key: videoKey(attempt.record.job_id),
          fps: 8,
          frames: 8,
          duration_s: 1,
          width: 64,
          height: 64,
        };
        if ((await attempt.succeed(result)) === 'succeeded' && ++completed === queueJobs) {
          completedAt = performance.now();
        }
      }
    });
    // Each submitter is its own key, as many callers would be; limits high enough never to refuse.
    const submitting = Promise.all(
      Array.from({ length: submitters }, async (_, owner) => {
        for (let i = owner; i < queueJobs; i += submitters) {
          await board.submit({
            jobId: newJobId(),
            ownerKeyId: `benchkey${owner}`,
            backend: 'video-diffusion',
            params,
            inputs,
            activeLimit: queueJobs,
          });
        }
      }),
    );
    await submitting.catch((error: unknown) => {
      submitFailed = true; // the takers would wait for ever for jobs that never came
      throw error;
    });
    const submittedAt = performance.now();
    await Promise.all(loops);
    queueRows.push({
      'taker loops': takers,
      jobs: queueJobs,
      'submitted/s': Math.round(queueJobs / ((submittedAt - started) / 1000)),
      'completed/s (end to end)': Math.round(queueJobs / ((completedAt - started) / 1000)),
    });
  }
} finally {
  for (const c of connections) await c.close();
  await nats.stop();
  await fx.remove();
}

process.stdout.write(
  `\nanimation bench: ${machine}; 1-min load average ${loadBefore.toFixed(2)} at start; ` +
    `CPU execution, ORT_INTRA_OP_THREADS=1\n`,
);
process.stdout.write(
  `\n(1) frames/s, tiny development models: video-diffusion ${steps} steps per segment; x264 ${encoderThreads} threads; ` +
    `median of ${runs} runs; queue = POST /animate 202 → succeeded (GET every ${pollMs} ms) with a warm worker; ` +
    `worker attempt = the worker's animation_job_duration_seconds (its start of the job → stored and cleaned up)\n`,
);
console.table(frameRows);
process.stdout.write(
  `\n(2) submit → running, ${latencyJobs} jobs one after another (video-diffusion, ${shortJob.fps * shortJob.duration_s} frames ${shortJob.width}×${shortJob.height}), worker idle ${gapMs} ms before each, ` +
    `timed to the worker's switchboard.events.animate.job.running event ` +
    `(below 0: the worker had started the job before the 202 reached the client)\n`,
);
console.table(latencyRows);
process.stdout.write(
  `\n(3) the queue alone (@switchboard/jobs, real NATS, a back-end that succeeds at once): ${submitters} concurrent submitters, each its own key\n`,
);
console.table(queueRows);
