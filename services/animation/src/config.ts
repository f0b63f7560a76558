import { z } from 'zod';
import { natsCredentialEnvFields, natsCredentialsFrom } from '@switchboard/broker-auth';
import { checkGrpcServerTlsEnv, env, loadConfig } from '@switchboard/config';
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
    ...env.tracingEnvFields,
    ...objectStoreEnvFields,
    ...jobEnvFields,
    ...natsCredentialEnvFields,
    ANIMATION_BACKENDS: backendList.describe(
      `Back-ends this worker pulls jobs for, comma-separated (${backendNames.join(', ')}); a GPU deployment and a CPU avatar one can split them.`,
    ),
    ANIMATION_CONCURRENCY: env.positiveInt(1).describe('Jobs of each back-end this worker runs at once.'),
    ANIMATION_MAX_ATTEMPTS: env
      .positiveInt(3)
      .describe('Attempts per job before it fails with `attempts_exhausted`.'),
    ANIMATION_VIDEO_DIFFUSION_DEFAULT_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Default video-diffusion model id; unset = MODEL_DIR/video-diffusion/models.json\'s `"default"`, else the first folder.',
      ),
    ANIMATION_VIDEO_DIFFUSION_STEPS: env
      .positiveInt(25)
      .describe("Denoising steps per segment (diffusers' SVD default)."),
    ANIMATION_PORTRAIT_DEFAULT_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Default portrait model id; unset = MODEL_DIR/portrait/models.json\'s `"default"`, else the first folder.',
      ),
    ANIMATION_ENCODER_THREADS: env
      .positiveInt(2)
      .describe('x264 threads; fixed, so the same job gives the same bytes on any machine.'),
    ANIMATION_FFMPEG_PATH: z
      .string()
      .min(1)
      .default('ffmpeg')
      .describe("The ffmpeg binary (Debian's package)."),
    ANIMATION_FFPROBE_PATH: z
      .string()
      .min(1)
      .default('ffprobe')
      .describe("The ffprobe binary (Debian's package)."),
    AVATAR_BASE_URL: z
      .url({ protocol: /^https?$/ })
      .default('https://api.d-id.com')
      .describe('The D-ID Talks API.'),
    AVATAR_API_KEY: z
      .string()
      .min(1)
      .optional()
      .describe(
        "D-ID's key, sent as `Authorization: Basic <key>`, never logged; unset = the avatar back-end takes no jobs and `avatar` submissions get `503`.",
      ),
    AVATAR_DEFAULT_VOICE: z
      .string()
      .min(1)
      .default('en-US-JennyNeural')
      .describe('The vendor voice of text jobs that name none.'),
    AVATAR_DEADLINE_MS: env
      .positiveInt(10 * 60_000)
      .describe(
        'Everything one attempt asks of the vendor (uploads, talk, polls, download) must end within this, else `upstream_timeout`.',
      ),
    AVATAR_POLL_INTERVAL_MS: env
      .positiveInt(2000)
      .describe('First gap between status polls; later gaps grow 1.5× up to 10× this (10 s at most).'),
    AVATAR_REQUEST_TIMEOUT_MS: env
      .positiveInt(30_000)
      .describe("One HTTP request's limit (then retried within the deadline)."),
    ANIMATION_LOAD_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Test only: delays model loading so tests can see jobs wait. Leave 0.'),
  })
  .superRefine(checkObjectStoreEnv)
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    ...modelWorkerSettings(e),
    natsUrl: e.NATS_URL,
    natsCredentials: natsCredentialsFrom(e),
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

/** The animation worker's environment schema, from which docs/configuration.md is generated. */
export const animationEnvSchema = schema.in;

/** Every variable the animation worker reads, so the chart and the runner can be checked against it. */
export const animationEnvVars = Object.keys(animationEnvSchema.shape);
