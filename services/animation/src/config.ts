import { z } from 'zod';
import { env, loadConfig } from '@switchboard/config';
import { jobEnvFields, jobSettings } from '@switchboard/jobs';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import { backendNames } from './backends/backend.js';

const backendList = z
  .string()
  .default(backendNames.join(','))
  .transform((raw) => [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(z.enum(backendNames)).min(1, 'name at least one back-end'));

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50054, shutdownGraceMs: 30_000 }),
    ...objectStoreEnvFields,
    ...jobEnvFields,
    /** The back-ends this worker serves (a GPU deployment and a CPU avatar one can split them). */
    ANIMATION_BACKENDS: backendList,
    /** Jobs of each back-end this worker runs at once. */
    ANIMATION_CONCURRENCY: env.positiveInt(1),
    /** Attempts per job before it fails with attempts_exhausted. */
    ANIMATION_MAX_ATTEMPTS: env.positiveInt(3),
    ANIMATION_VIDEO_DIFFUSION_DEFAULT_MODEL: z.string().min(1).optional(),
    /** Denoising steps per segment (diffusers' SVD default is 25). */
    ANIMATION_VIDEO_DIFFUSION_STEPS: env.positiveInt(25),
    ANIMATION_PORTRAIT_DEFAULT_MODEL: z.string().min(1).optional(),
    /** x264 threads: fixed, so the same job gives the same bytes on any machine. */
    ANIMATION_ENCODER_THREADS: env.positiveInt(2),
    ANIMATION_FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
    ANIMATION_FFPROBE_PATH: z.string().min(1).default('ffprobe'),
    /** The D-ID Talks API. */
    AVATAR_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.d-id.com'),
    /** D-ID's key, sent as `Authorization: Basic <key>`; unset = the avatar back-end is unconfigured. */
    AVATAR_API_KEY: z.string().min(1).optional(),
    /** The vendor voice for text jobs that name none. */
    AVATAR_DEFAULT_VOICE: z.string().min(1).default('en-US-JennyNeural'),
    /** A job's whole dealings with the vendor must end within this. */
    AVATAR_DEADLINE_MS: env.positiveInt(10 * 60_000),
    AVATAR_POLL_INTERVAL_MS: env.positiveInt(2000),
    AVATAR_REQUEST_TIMEOUT_MS: env.positiveInt(30_000),
    /** TEST-ONLY knob: delays model loading so tests can see jobs wait. Leave 0. */
    ANIMATION_LOAD_DELAY_MS: z.coerce.number().int().min(0).default(0),
  })
  .superRefine(checkObjectStoreEnv)
  .transform((e) => ({
    ...modelWorkerSettings(e),
    natsUrl: e.NATS_URL,
    jobs: { ...jobSettings(e), maxAttempts: e.ANIMATION_MAX_ATTEMPTS },
    backends: e.ANIMATION_BACKENDS,
    concurrency: e.ANIMATION_CONCURRENCY,
    videoDiffusion: {
      defaultModel: e.ANIMATION_VIDEO_DIFFUSION_DEFAULT_MODEL,
      steps: e.ANIMATION_VIDEO_DIFFUSION_STEPS,
    },
    portrait: { defaultModel: e.ANIMATION_PORTRAIT_DEFAULT_MODEL },
    encoderThreads: e.ANIMATION_ENCODER_THREADS,
    ffmpeg: { ffmpeg: e.ANIMATION_FFMPEG_PATH, ffprobe: e.ANIMATION_FFPROBE_PATH },
    avatar: {
      baseUrl: e.AVATAR_BASE_URL,
      apiKey: e.AVATAR_API_KEY,
      defaultVoice: e.AVATAR_DEFAULT_VOICE,
      deadlineMs: e.AVATAR_DEADLINE_MS,
      pollIntervalMs: e.AVATAR_POLL_INTERVAL_MS,
      requestTimeoutMs: e.AVATAR_REQUEST_TIMEOUT_MS,
    },
    loadDelayMs: e.ANIMATION_LOAD_DELAY_MS,
    objectStore: objectStoreConfigFrom(e),
  }));

export type AnimationConfig = ReturnType<typeof loadAnimationConfig>;

export function loadAnimationConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** Every variable the animation worker reads, so the chart and the runner can be checked against it. */
export const animationEnvVars = Object.keys(schema.in.shape);
