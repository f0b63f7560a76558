import { z } from 'zod';
import { env, loadConfig } from '@switchboard/config';
import { ortEnvFields } from '@switchboard/models';

const schema = z
  .object({
    GRPC_PORT: env.port(50051),
    GRPC_HOST: z.string().default('0.0.0.0'),
    METRICS_PORT: env.port(9464),
    LOG_LEVEL: env.logLevel,
    /** The model repository root; this worker reads MODEL_DIR/llm/<model-id>/. */
    MODEL_DIR: z.string().default('./models'),
    /** The default model id; unset = MODEL_DIR/llm/models.json's "default", else the first folder. */
    LLM_DEFAULT_MODEL: z.string().min(1).optional(),
    /** Generations running at once (per model process; each one holds its own KV cache). */
    LLM_CONCURRENCY: env.positiveInt(1),
    /** Requests allowed to wait for a slot; beyond that → 503 no_capacity with Retry-After. */
    LLM_QUEUE_DEPTH: z.coerce.number().int().min(0).default(16),
    /** Retry-After (seconds) for requests that arrive while the model is still loading. */
    LLM_LOADING_RETRY_AFTER_SECONDS: env.positiveInt(5),
    /** TEST-ONLY knob: delays model loading so tests can observe the `loading` state. Leave 0. */
    LLM_LOAD_DELAY_MS: z.coerce.number().int().min(0).default(0),
    SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
    /**
     * Accepted, unused: the chart and the local runner give every worker NATS_URL, and the llm
     * worker publishes no events yet. Validated so a typo still fails start-up.
     */
    NATS_URL: env.url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222'),
    ...ortEnvFields,
  })
  .transform((e) => ({
    grpc: { port: e.GRPC_PORT, host: e.GRPC_HOST },
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    modelDir: e.MODEL_DIR,
    defaultModel: e.LLM_DEFAULT_MODEL,
    queue: { concurrency: e.LLM_CONCURRENCY, depth: e.LLM_QUEUE_DEPTH },
    loadingRetryAfterSeconds: e.LLM_LOADING_RETRY_AFTER_SECONDS,
    loadDelayMs: e.LLM_LOAD_DELAY_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    execution: {
      providers: e.ORT_EXECUTION_PROVIDERS,
      deviceId: e.ORT_DEVICE_ID,
      intraOpThreads: e.ORT_INTRA_OP_THREADS,
    },
  }));

export type LlmConfig = ReturnType<typeof loadLlmConfig>;

export function loadLlmConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** Every variable the llm worker reads, so the chart and the runner can be checked against it. */
export const llmEnvVars = Object.keys(schema.in.shape);
