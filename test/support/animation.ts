// Animation test support: a model repository with the tiny video-diffusion and portrait models,
// an animation stack (NATS, Redis, gateways, a shared object-store folder; workers started and
// killed at will), media fixtures made with ffmpeg, and helpers to follow jobs and check MP4s.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTinyPortrait, buildTinyVideoDiffusion } from '@switchboard/models-dev';
import { createKey, bearer, type CreatedKey } from './admin.js';
import type { GatewayProcess } from './gateway.js';
import { runTool as run } from './processes.js';
import { startStack, sleep, type Stack } from './stack.js';
import { startWorker, type WorkerProcess } from './worker.js';

export interface AnimationStack {
  stack: Stack;
  gateway: GatewayProcess;
  modelDir: string;
  objectsDir: string;
  /** Environment every animation worker of this stack gets. */
  workerEnv: Record<string, string>;
  startWorker(env?: Record<string, string>, options?: { waitServing?: boolean }): Promise<WorkerProcess>;
  key(tier?: string): Promise<CreatedKey>;
  stop(): Promise<void>;
}

/** A stack whose gateways and animation workers share NATS, Redis and a local object store. */
export async function startAnimationStack(
  options: {
    gateways?: number;
    gatewayEnv?: Record<string, string>;
    workerEnv?: Record<string, string>;
    /** In the test process when absent; spawnGateway for a gateway process (benchmarks). */
    startGateway?: (env: Record<string, string>) => Promise<GatewayProcess>;
  } = {},
): Promise<AnimationStack> {
  const root = await mkdtemp(join(tmpdir(), 'sb-animation-'));
  const modelDir = join(root, 'models');
  const objectsDir = join(root, 'objects');
  await buildTinyVideoDiffusion(join(modelDir, 'video-diffusion', 'tiny-svd-dev'), { seed: 0 });
  await buildTinyPortrait(join(modelDir, 'portrait', 'tiny-liveportrait-dev'), { seed: 0 });
  const ackWait = { ANIMATION_ACK_WAIT_MS: '3000' };
  const stack = await startStack({
    gateways: options.gateways,
    startGateway: options.startGateway,
    env: { OBJECT_STORE_DIR: objectsDir, ...ackWait, ...options.gatewayEnv },
  });
  const workers: WorkerProcess[] = [];
  const workerEnv = {
    ...stack.nats.env('animation'),
    MODEL_DIR: modelDir,
    OBJECT_STORE_DIR: objectsDir,
    ORT_INTRA_OP_THREADS: '1',
    ANIMATION_VIDEO_DIFFUSION_STEPS: '4',
    ...ackWait,
    ...options.workerEnv,
  };
  return {
    stack,
    gateway: stack.gateway,
    modelDir,
    objectsDir,
    workerEnv,
    async startWorker(env = {}, startOptions = {}) {
      const worker = await startWorker('animation', { env: { ...workerEnv, ...env }, ...startOptions });
      workers.push(worker);
      return worker;
    },
    key: (tier = 'professional') => createKey(stack.gateway, { tier }),
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      await stack.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export interface JobView {
  job_id: string;
  backend: string;
  status: string;
  progress: number;
  attempts: number;
  result: {
    url: string;
    poster_url: string;
    fps: number;
    frames: number;
    duration_s: number;
    width: number;
    height: number;
  } | null;
  error: { code: string; message: string } | null;
}

export async function submit(
  gateway: GatewayProcess,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gateway.url}/animate`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * The job id of a `POST /animate` answer, after checking it is the 202 the API promises
 * (`Location` and `status_url` naming the job).
 */
export async function acceptedJobId(res: Response): Promise<string> {
  if (res.status !== 202) throw new Error(`expected 202, got ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { job_id: string; status: string; status_url: string };
  const own = `/animate/${body.job_id}`;
  if (res.headers.get('location') !== own || body.status_url !== own) {
    throw new Error(
      `Location ${res.headers.get('location')} / status_url ${body.status_url}, expected ${own}`,
    );
  }
  return body.job_id;
}

/** Submits a JSON job and waits until it has ended (succeeded, failed or canceled). */
export async function runJob(
  gateway: GatewayProcess,
  key: string,
  body: Record<string, unknown>,
  timeoutMs?: number,
): Promise<JobView> {
  const jobId = await acceptedJobId(await submit(gateway, key, body));
  return waitForJob(gateway, key, jobId, undefined, timeoutMs);
}

/** ffprobe of a finished job's MP4, downloaded as its owner. */
export async function probeResult(gateway: GatewayProcess, key: string, job: JobView): Promise<Probe> {
  if (!job.result) throw new Error(`job ${job.job_id} has no result: ${JSON.stringify(job.error)}`);
  const res = await fetch(`${gateway.url}${job.result.url}`, { headers: bearer(key) });
  return probeMp4(Buffer.from(await res.arrayBuffer()));
}

export async function getJob(gateway: GatewayProcess, key: string, jobId: string): Promise<JobView> {
  const res = await fetch(`${gateway.url}/animate/${jobId}`, { headers: bearer(key) });
  if (res.status !== 200) throw new Error(`GET job: ${res.status} ${await res.text()}`);
  return (await res.json()) as JobView;
}

/** Polls the job until `done(job)`; fails after `timeoutMs` with the last state. */
export async function waitForJob(
  gateway: GatewayProcess,
  key: string,
  jobId: string,
  done: (job: JobView) => boolean = (job) => ['succeeded', 'failed', 'canceled'].includes(job.status),
  timeoutMs = 60_000,
): Promise<JobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // 503 while NATS restarts is an answer to wait through, like a client's retry would.
    const job = await getJob(gateway, key, jobId).catch((error: Error) => {
      if (/GET job: 503/.test(error.message) && Date.now() < deadline) return null;
      throw error;
    });
    if (job && done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${JSON.stringify(job)}`);
    await sleep(100);
  }
}

export interface Fixtures {
  dir: string;
  png: Buffer;
  /** 256×256 of noise: a PNG of some 190 KB, larger than a form field usually holds. */
  noisePng: Buffer;
  /** A 1-second tone, WAV. */
  wav: Buffer;
  /** A 1-second 10 fps test pattern with a tone, MP4. */
  video: Buffer;
  remove(): Promise<void>;
}

export async function makeFixtures(): Promise<Fixtures> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-animation-fixtures-'));
  const ff = (args: string[]) =>
    run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args]);
  await ff(['-f', 'lavfi', '-i', 'testsrc=size=96x96:rate=1', '-frames:v', '1', join(dir, 'image.png')]);
  await ff([
    '-f',
    'lavfi',
    '-i',
    'nullsrc=size=256x256,geq=lum=random(1)*255:cb=128:cr=128',
    '-frames:v',
    '1',
    join(dir, 'noise.png'),
  ]);
  await ff(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '16000', join(dir, 'tone.wav')]);
  await ff([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=128x128:rate=10:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=330:duration=1',
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    join(dir, 'driving.mp4'),
  ]);
  return {
    dir,
    png: await readFile(join(dir, 'image.png')),
    noisePng: await readFile(join(dir, 'noise.png')),
    wav: await readFile(join(dir, 'tone.wav')),
    video: await readFile(join(dir, 'driving.mp4')),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

export interface Probe {
  codec: string;
  pixFmt: string;
  width: number;
  height: number;
  fps: number;
  frames: number;
  audio: boolean;
}

/** ffprobe of an MP4 held in memory (written to a temp file). */
export async function probeMp4(bytes: Buffer): Promise<Probe> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-probe-'));
  try {
    const path = join(dir, 'video.mp4');
    await writeFile(path, bytes);
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-count_frames',
      '-print_format',
      'json',
      '-show_streams',
      path,
    ]);
    const streams = (JSON.parse(stdout) as { streams: Record<string, string | number>[] }).streams;
    const video = streams.find((s) => s.codec_type === 'video')!;
    const [num, den] = String(video.avg_frame_rate).split('/').map(Number);
    return {
      codec: String(video.codec_name),
      pixFmt: String(video.pix_fmt),
      width: Number(video.width),
      height: Number(video.height),
      fps: num! / den!,
      frames: Number(video.nb_read_frames),
      audio: streams.some((s) => s.codec_type === 'audio'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
