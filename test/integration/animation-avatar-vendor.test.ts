// The avatar back-end driven directly against the fake D-ID Talks API (a real HTTP server speaking
// the vendor's wire format) with real ffmpeg: uploads, Basic auth, the talk body, polling through
// created → started → done, the download and the clip spec handed to the transcoder; and each
// failure rule: 429/500 retried to success, 401 / ValidationError / error / rejected failing
// `upstream_failed`, a talk that never ends failing `upstream_timeout` at the deadline, a slow
// vendor, a cancel during polling, and the unconfigured back-end.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type {
  ClipSpec,
  JobParams,
  RenderRequest,
  VideoOutput,
} from '@switchboard/animation/dist/backends/backend.js';
import { PermanentJobError } from '@switchboard/animation/dist/backends/backend.js';
import {
  createAvatarBackend,
  type AvatarBackendOptions,
} from '@switchboard/animation/dist/backends/avatar/index.js';
import { probeMedia, type MediaInfo } from '@switchboard/animation/dist/media/probe.js';
import { defaultFfmpegPaths } from '@switchboard/animation/dist/media/run-ffmpeg.js';
import { createLogger } from '@switchboard/telemetry';
import { defaultSwitches, startFakeDid, type FakeDid } from '@switchboard/devcluster';
import { runTool } from '../support/processes.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const ffmpeg = (...args: string[]) =>
  runTool('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args]);

let fake: FakeDid;
let dir: string;
let png: string;
let webp: string;
let mp3: string;
let vendorErrors: string[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-avatar-'));
  png = join(dir, 'portrait.png');
  webp = join(dir, 'portrait.webp');
  mp3 = join(dir, 'speech.mp3');
  await ffmpeg('-f', 'lavfi', '-i', 'color=c=0x3366cc:s=96x64', '-frames:v', '1', png);
  await ffmpeg('-i', png, '-c:v', 'libwebp', webp);
  await ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=300:duration=1.5', '-c:a', 'libmp3lame', mp3);
  fake = await startFakeDid();
});

after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  fake.set(defaultSwitches);
  fake.requests.length = 0;
  fake.talkBodies.length = 0;
  vendorErrors = [];
});

function avatar(overrides: Partial<AvatarBackendOptions> = {}) {
  return createAvatarBackend({
    baseUrl: fake.url,
    apiKey: fake.apiKey,
    deadlineMs: 15_000,
    pollIntervalMs: 20,
    requestTimeoutMs: 3_000,
    retry: { baseMs: 20, maxMs: 100 },
    ffmpeg: defaultFfmpegPaths,
    logger,
    onVendorError: (kind) => vendorErrors.push(kind),
    ...overrides,
  });
}

interface Rendered {
  spec: ClipSpec;
  info: MediaInfo;
  progress: number[];
}

/** A VideoOutput that records what the transcoder was asked for and probes the vendor's file. */
async function render(
  params: Partial<JobParams>,
  inputs: { image?: string; audio?: string },
  options: { backend?: ReturnType<typeof avatar>; signal?: AbortSignal } = {},
): Promise<Rendered> {
  const workDir = await mkdtemp(join(dir, 'job-'));
  const progress: number[] = [];
  let done: Omit<Rendered, 'progress'> | undefined;
  const out: VideoOutput = {
    frames: () => Promise.reject(new Error('avatar must hand over a finished video')),
    transcode: async (path, spec) => {
      done = { spec, info: await probeMedia(defaultFfmpegPaths, path, { kind: 'video' }) };
    },
  };
  const request: RenderRequest = {
    jobId: 'job-test',
    params: { motion_bucket_id: 127, noise_aug_strength: 0.02, ...params },
    inputs: { image: inputs.image ?? png, audio: inputs.audio },
    workDir,
    signal: options.signal ?? new AbortController().signal,
    progress: (fraction) => progress.push(fraction),
    logger,
  };
  try {
    await (options.backend ?? avatar()).render(request, out);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  assert.ok(done, 'transcode was called');
  return { ...done, progress };
}

const failsWith = (code: string, pattern?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof PermanentJobError, `expected PermanentJobError, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  assert.ok(!error.message.includes(fake.apiKey), 'the key must never appear in an error');
  return true;
};

const calls = () =>
  fake.requests.map((r) => `${r.method} ${r.path.replace(/tlk_[\w-]+/, '{id}')} ${r.status}`);

test('audio-driven: image and audio uploaded with Basic auth, talk polled to done, spec from the video', async () => {
  const { spec, info, progress } = await render({}, { audio: mp3 });

  const api = fake.requests.filter((r) => !r.path.startsWith('/results/'));
  assert.ok(
    api.every((r) => r.auth === 'ok'),
    'every API call carries Basic <key>',
  );
  const download = fake.requests.find((r) => r.path.startsWith('/results/'));
  assert.equal(download?.auth, 'missing', 'the pre-signed result URL never sees the key');
  assert.deepEqual(calls().slice(0, 3), ['POST /images 201', 'POST /audios 201', 'POST /talks 201']);
  assert.ok(calls().filter((c) => c === 'GET /talks/{id} 200').length >= 3, calls().join(', '));
  assert.equal(calls().at(-1), 'GET /results/{id}.mp4 200');

  const body = fake.talkBodies[0] as { source_url: string; script: Record<string, unknown> };
  assert.match(body.source_url, /^s3:\/\/d-id-images-prod\//);
  assert.equal(body.script.type, 'audio');
  assert.match(String(body.script.audio_url), /^s3:\/\/d-id-audios-prod\//);

  assert.equal(info.video?.codec, 'h264');
  assert.ok(info.duration && Math.abs(info.duration - 1.5) < 0.15, `vendor video ${info.duration} s`);
  assert.deepEqual(spec, {
    width: 96,
    height: 64,
    fps: 25,
    frames: Math.round(25 * (info.duration ?? 0)),
    audio: mp3,
  });
  assert.deepEqual(
    [...new Set(progress.filter((p) => [0.1, 0.2, 0.95, 1].includes(p)))],
    [0.1, 0.2, 0.95, 1],
  );
  assert.ok(
    progress.some((p) => p >= 0.3 && p < 0.9),
    'progress while started',
  );
  assert.deepEqual(
    [...progress].sort((a, b) => a - b),
    progress,
    'progress never goes back',
  );
  assert.deepEqual(vendorErrors, []);
});

test('fps and duration_s are honoured: the audio is cut before upload and frames follow', async () => {
  const { spec, info } = await render({ fps: 10, duration_s: 0.8 }, { audio: mp3 });
  assert.ok(
    info.duration && info.duration < 1.1,
    `the vendor rendered only what is kept (${info.duration} s)`,
  );
  assert.equal(spec.fps, 10);
  assert.equal(spec.frames, Math.round(10 * Math.min(info.duration ?? 0, 0.8)));
});

test('text-driven: a text script with the given voice, else the default voice; no audio upload', async () => {
  fake.set({ textSeconds: 1 });
  const { spec } = await render({ text: 'Hello there', voice: 'en-GB-SoniaNeural' }, {});
  await render({ text: 'Hello again' }, {});
  assert.equal(fake.requests.filter((r) => r.path === '/audios').length, 0);
  assert.deepEqual(
    fake.talkBodies.map((b) => (b as { script: unknown }).script),
    [
      { type: 'text', input: 'Hello there', provider: { type: 'microsoft', voice_id: 'en-GB-SoniaNeural' } },
      { type: 'text', input: 'Hello again', provider: { type: 'microsoft', voice_id: 'en-US-JennyNeural' } },
    ],
  );
  assert.equal(spec.audio, undefined, "the vendor's own speech is kept");
  assert.ok(Math.abs(spec.frames - 25) <= 1, `frames ${spec.frames}`);
});

test('a WebP portrait is sent as PNG (the vendor takes PNG and JPEG only)', async () => {
  const { spec } = await render({ text: 'Hi' }, { image: webp });
  assert.equal(spec.width, 96);
});

test('429 with Retry-After, then success: the wait is honoured and the job succeeds', async () => {
  fake.set({ rateLimited: 1, retryAfterSeconds: 1, faultsOn: 'POST /talks' });
  const started = Date.now();
  await render({}, { audio: mp3 });
  assert.ok(Date.now() - started >= 1000, 'waited Retry-After');
  assert.deepEqual(
    calls().filter((c) => c.startsWith('POST /talks')),
    ['POST /talks 429', 'POST /talks 201'],
  );
  assert.deepEqual(vendorErrors, ['rate_limited']);
});

test('500s while polling, then success', async () => {
  fake.set({ serverErrors: 2, faultsOn: 'GET /talks' });
  await render({}, { audio: mp3 });
  assert.equal(calls().filter((c) => c === 'GET /talks/{id} 500').length, 2);
  assert.deepEqual(vendorErrors, ['server_error', 'server_error']);
});

test('a wrong key, or a vendor answering 401, fails upstream_failed at once', async () => {
  await assert.rejects(
    render({}, { audio: mp3 }, { backend: avatar({ apiKey: 'not-the-key' }) }),
    failsWith('upstream_failed', /401 AuthorizationError/),
  );
  assert.deepEqual(
    fake.requests.map((r) => [r.path, r.auth]),
    [['/images', 'wrong']],
  );
  fake.set({ unauthorized: true });
  await assert.rejects(render({ text: 'hi' }, {}), failsWith('upstream_failed', /AuthorizationError/));
  assert.deepEqual(vendorErrors, ['unauthorized', 'unauthorized']);
});

test('a ValidationError on POST /talks fails upstream_failed without polling', async () => {
  fake.set({ validationError: true });
  await assert.rejects(render({ text: 'hi' }, {}), failsWith('upstream_failed', /400 ValidationError/));
  assert.equal(fake.requests.filter((r) => r.method === 'GET').length, 0);
});

test('a talk that ends error or rejected fails upstream_failed with the vendor kind', async () => {
  fake.set({ outcome: 'error' });
  await assert.rejects(render({ text: 'hi' }, {}), failsWith('upstream_failed', /ended error FaceError/));
  fake.set({ outcome: 'rejected' });
  await assert.rejects(render({ text: 'hi' }, {}), failsWith('upstream_failed', /ended rejected/));
  assert.deepEqual(vendorErrors, ['talk_error', 'talk_rejected']);
});

test('a talk that never finishes fails upstream_timeout at the deadline, not later', async () => {
  fake.set({ outcome: 'never' });
  const started = Date.now();
  await assert.rejects(
    render({ text: 'hi' }, {}, { backend: avatar({ deadlineMs: 800 }) }),
    failsWith('upstream_timeout', /deadline/),
  );
  const took = Date.now() - started;
  assert.ok(took >= 700 && took < 2_500, `took ${took} ms`);
});

test('a slow vendor within the deadline succeeds; slower than the request timeout, it times out', async () => {
  fake.set({ pollDelayMs: 150 });
  await render({ text: 'hi' }, {});

  fake.set({ pollDelayMs: 400 });
  const started = Date.now();
  await assert.rejects(
    render({ text: 'hi' }, {}, { backend: avatar({ requestTimeoutMs: 150, deadlineMs: 1_200 }) }),
    failsWith('upstream_timeout', /GET \/talks\/\{id\}/),
  );
  assert.ok(Date.now() - started < 3_000);
  assert.ok(vendorErrors.includes('timeout'));
});

test('a cancel during polling ends the job within a second, even mid-request', async () => {
  fake.set({ outcome: 'never', pollDelayMs: 5_000 });
  const controller = new AbortController();
  const reason = new Error('job canceled');
  const job = render(
    { text: 'hi' },
    {},
    { signal: controller.signal, backend: avatar({ requestTimeoutMs: 30_000 }) },
  );
  while (!fake.requests.some((r) => r.method === 'GET')) await new Promise((r) => setTimeout(r, 10));
  const abortedAt = Date.now();
  controller.abort(reason);
  await assert.rejects(job, (error) => error === reason);
  assert.ok(Date.now() - abortedAt < 1_000, `ended ${Date.now() - abortedAt} ms after the cancel`);
});

test('unconfigured: describe says so and render refuses with unavailable, calling nothing', async () => {
  const backend = createAvatarBackend({
    deadlineMs: 1_000,
    pollIntervalMs: 20,
    requestTimeoutMs: 1_000,
    ffmpeg: defaultFfmpegPaths,
    logger,
  });
  const info = backend.describe();
  assert.equal(info.configured, false);
  assert.match(info.models[0]?.description ?? '', /AVATAR_BASE_URL/);
  await backend.ready();
  await assert.rejects(render({ text: 'hi' }, {}, { backend }), failsWith('unavailable'));
  assert.equal(fake.requests.length, 0);
});
