import { tmpdir } from 'node:os';
import { z } from 'zod';
import { env, loadConfig } from '@switchboard/config';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50052, shutdownGraceMs: 60_000 }),
    /** The default model id; unset = MODEL_DIR/whisper/models.json's "default", else the first folder. */
    WHISPER_DEFAULT_MODEL: z.string().min(1).optional(),
    /** Windows recognised at once; each one runs the model on all cores it is given. */
    WHISPER_CONCURRENCY: env.positiveInt(1),
    /**
     * Uploads in progress (being received, decoded or recognised) beyond WHISPER_CONCURRENCY;
     * beyond that → 503 no_capacity. Each holds one window of samples, whatever its length.
     */
    WHISPER_QUEUE_DEPTH: z.coerce.number().int().min(0).default(8),
    /** Longest audio accepted, in seconds (it is decoded window by window, so this bounds time, not memory). */
    WHISPER_MAX_AUDIO_SECONDS: env.positiveInt(2 * 3600),
    /** Window and overlap for audio longer than one window (Whisper sees 30 s at a time). */
    WHISPER_CHUNK_SECONDS: z.coerce.number().positive().max(30).default(30),
    WHISPER_STRIDE_SECONDS: z.coerce.number().positive().default(5),
    /** Where MP4-family uploads (which ffmpeg must read with seeking) are spooled; default the OS temp dir. */
    WHISPER_SPOOL_DIR: z.string().min(1).default(tmpdir()),
    /**
     * Bytes all spooled uploads together may take in WHISPER_SPOOL_DIR (a spooled file stays until
     * its transcription ends); an upload that would exceed it → 503 no_capacity. The default, 512 MiB,
     * stays below the chart's 1 GiB /tmp, where a full emptyDir would get the pod evicted.
     */
    WHISPER_SPOOL_MAX_BYTES: env.positiveInt(512 * 1024 ** 2),
    /** The ffmpeg binary that decodes uploads (Debian's package). */
    FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
    /** Retry-After (seconds) for requests that arrive while the model is still loading. */
    WHISPER_LOADING_RETRY_AFTER_SECONDS: env.positiveInt(5),
    /** TEST-ONLY knob: delays model loading so tests can observe the `loading` state. Leave 0. */
    WHISPER_LOAD_DELAY_MS: z.coerce.number().int().min(0).default(0),
  })
  .refine((e) => e.WHISPER_STRIDE_SECONDS * 2 < e.WHISPER_CHUNK_SECONDS, {
    path: ['WHISPER_STRIDE_SECONDS'],
    message: 'must be less than half of WHISPER_CHUNK_SECONDS',
  })
  .transform((e) => ({
    ...modelWorkerSettings(e),
    defaultModel: e.WHISPER_DEFAULT_MODEL,
    queue: { concurrency: e.WHISPER_CONCURRENCY, depth: e.WHISPER_QUEUE_DEPTH },
    maxAudioSeconds: e.WHISPER_MAX_AUDIO_SECONDS,
    windowing: { chunkSeconds: e.WHISPER_CHUNK_SECONDS, strideSeconds: e.WHISPER_STRIDE_SECONDS },
    ffmpegPath: e.FFMPEG_PATH,
    spoolDir: e.WHISPER_SPOOL_DIR,
    spoolMaxBytes: e.WHISPER_SPOOL_MAX_BYTES,
    loadingRetryAfterSeconds: e.WHISPER_LOADING_RETRY_AFTER_SECONDS,
    loadDelayMs: e.WHISPER_LOAD_DELAY_MS,
  }));

export type WhisperConfig = ReturnType<typeof loadWhisperConfig>;

export function loadWhisperConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** Every variable the whisper worker reads, so the chart and the runner can be checked against it. */
export const whisperEnvVars = Object.keys(schema.in.shape);
