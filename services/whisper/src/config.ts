import { tmpdir } from 'node:os';
import { z } from 'zod';
import { checkGrpcServerTlsEnv, env, loadConfig } from '@switchboard/config';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50052, shutdownGraceMs: 60_000 }),
    ...env.tracingEnvFields,
    WHISPER_DEFAULT_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Default model id; unset = MODEL_DIR/whisper/models.json\'s `"default"`, else the first folder.',
      ),
    WHISPER_CONCURRENCY: env
      .positiveInt(1)
      .describe(
        'Recognition passes run at once, each a batch of up to WHISPER_MAX_BATCH windows on all cores the model is given; uploads take turns window by window.',
      ),
    WHISPER_MAX_BATCH: env
      .positiveInt(4)
      .describe(
        "Most 30-s windows encoded and decoded together in one pass: windows of concurrent uploads, or up to this many of one long upload, which keeps as many in flight (each window's tokens are those it gives alone). Bounds memory per pass (each window is 80×3000 floats of features, ≈ 1 MB, plus its activations) and per upload (this many windows of samples, ≈ 1.9 MB each); 1 recognises one window at a time.",
      ),
    WHISPER_QUEUE_DEPTH: z.coerce
      .number()
      .int()
      .min(0)
      .default(8)
      .describe(
        'Received uploads decoded and recognised at once beyond WHISPER_CONCURRENCY; as many more wait, served by key in turns, and beyond those `503 no_capacity`. An upload takes a place only once it has arrived whole (uploads still arriving hold spool bytes only), then holds at most WHISPER_MAX_BATCH windows of samples, whatever its length.',
      ),
    WHISPER_MAX_AUDIO_SECONDS: env
      .positiveInt(2 * 3600)
      .describe(
        'Longest audio accepted, in seconds; longer is `413 payload_too_large` (decoding is window by window, so this bounds time, not memory).',
      ),
    WHISPER_CHUNK_SECONDS: z.coerce
      .number()
      .positive()
      .max(30)
      .default(30)
      .describe('Window of long audio, in seconds, at most 30 (Whisper hears 30 s at a time).'),
    WHISPER_STRIDE_SECONDS: z.coerce
      .number()
      .positive()
      .default(5)
      .describe(
        "Overlap on each inner edge of a window, used to stitch the windows' texts; under half a window.",
      ),
    WHISPER_SPOOL_DIR: z.string().min(1).default(tmpdir()).meta({
      description:
        'Where uploads are spooled while they arrive: recognition starts once an upload and all its form fields have arrived, so fields may follow the file.',
      docsDefault: 'the OS temp folder',
    }),
    WHISPER_SPOOL_MAX_BYTES: env
      .positiveInt(512 * 1024 ** 2)
      .describe(
        "Bytes all spooled uploads together may take in WHISPER_SPOOL_DIR (a spooled file stays until its transcription ends); past it `503 no_capacity` with Retry-After, or `413 payload_too_large` for an upload larger than this alone. 512 MiB stays below the chart's 1 GiB /tmp, where a full emptyDir would get the pod evicted.",
      ),
    WHISPER_SPOOL_PER_KEY_BYTES: env
      .positiveInt(500_000_000)
      .describe(
        "Bytes the spooled uploads of one API key may take together (within WHISPER_SPOOL_MAX_BYTES), so that one key sending many slow uploads cannot take the whole spool from the others; past it `503 no_capacity` with Retry-After (the key's other uploads hold the room), or `413 payload_too_large` for an upload larger than this alone. The default is the largest default tier upload limit (enterprise, 500 MB), so one such upload always fits.",
      ),
    FFMPEG_PATH: z
      .string()
      .min(1)
      .default('ffmpeg')
      .describe("The ffmpeg binary that decodes every upload (Debian's package)."),
    WHISPER_LOADING_RETRY_AFTER_SECONDS: env
      .positiveInt(5)
      .describe('`Retry-After` (seconds) of `503 model_loading`, while the model is still loading.'),
    WHISPER_LOAD_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Test only: delays model loading so tests can observe the `loading` state. Leave 0.'),
  })
  .refine((e) => e.WHISPER_STRIDE_SECONDS * 2 < e.WHISPER_CHUNK_SECONDS, {
    path: ['WHISPER_STRIDE_SECONDS'],
    message: 'must be less than half of WHISPER_CHUNK_SECONDS',
  })
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    ...modelWorkerSettings(e),
    defaultModel: e.WHISPER_DEFAULT_MODEL,
    queue: { concurrency: e.WHISPER_CONCURRENCY, depth: e.WHISPER_QUEUE_DEPTH },
    maxBatch: e.WHISPER_MAX_BATCH,
    maxAudioSeconds: e.WHISPER_MAX_AUDIO_SECONDS,
    windowing: { chunkSeconds: e.WHISPER_CHUNK_SECONDS, strideSeconds: e.WHISPER_STRIDE_SECONDS },
    ffmpegPath: e.FFMPEG_PATH,
    spoolDir: e.WHISPER_SPOOL_DIR,
    spoolMaxBytes: e.WHISPER_SPOOL_MAX_BYTES,
    spoolPerKeyBytes: e.WHISPER_SPOOL_PER_KEY_BYTES,
    loadingRetryAfterSeconds: e.WHISPER_LOADING_RETRY_AFTER_SECONDS,
    loadDelayMs: e.WHISPER_LOAD_DELAY_MS,
  }));

export type WhisperConfig = ReturnType<typeof loadWhisperConfig>;

export function loadWhisperConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** The whisper worker's environment schema, from which docs/configuration.md is generated. */
export const whisperEnvSchema = schema.in;

/** Every variable the whisper worker reads, so the chart and the runner can be checked against it. */
export const whisperEnvVars = Object.keys(whisperEnvSchema.shape);
