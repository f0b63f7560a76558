import { z } from 'zod';
import { checkGrpcServerTlsEnv, env, loadConfig } from '@switchboard/config';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';

/** Weight files Transformers.js can pick in a model folder, by its dtype names (see LLM_DTYPE). */
export const llmDtypes = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'] as const;
export type LlmDtype = (typeof llmDtypes)[number];

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50051, shutdownGraceMs: 20_000 }),
    ...env.tracingEnvFields,
    LLM_DEFAULT_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe('Default model id; unset = MODEL_DIR/llm/models.json\'s `"default"`, else the first folder.'),
    LLM_DTYPE: z
      .enum(llmDtypes)
      .default('fp32')
      .describe(
        "Which weights file of each model folder to load, by Transformers.js's names: `fp32` = `onnx/model.onnx`, `q8` = `onnx/model_quantized.onnx` (8-bit, the usual quantized export), `fp16`, `int8`, `uint8`, `q4`, `q4f16`, `bnb4` = `onnx/model_<dtype>.onnx`. A model without that file fails to load. /models reports it as `dtype`.",
      ),
    LLM_MAX_BATCH: env
      .positiveInt(16)
      .describe(
        'Generations decoded together, one model pass per token for all of them (continuous batching): requests join between steps and leave when done. 1 runs them one at a time.',
      ),
    LLM_KV_CACHE_TOKENS: env
      .positiveInt(16_384)
      .describe(
        "Cache positions a batch may reserve: a request joins only while (rows + 1) × the longest row's prompt + max_tokens stays within it (a request alone always runs). Memory: this × 2 × layers × KV heads × head size × bytes per value (fp32 4), e.g. 16 MiB for TinyStories-656K, 1 GiB for a model of 16 layers with 8 KV heads of 64 in fp32.",
      ),
    LLM_PREFILL_CHUNK_TOKENS: env
      .positiveInt(256)
      .describe(
        'Prompt tokens read per pass between decoding steps: new prompts are read together while their count × the longest fits, a longer prompt alone in chunks of this, one per step, so a long prompt delays the running streams by one chunk at a time.',
      ),
    LLM_STREAM_BUFFER_EVENTS: env
      .positiveInt(256)
      .describe(
        'Text events a stream may leave unread (a client reading slower than the batch generates) before its generation is stopped with `no_capacity`, so it never slows the others.',
      ),
    LLM_QUEUE_DEPTH: z.coerce
      .number()
      .int()
      .min(0)
      .default(16)
      .describe(
        'Requests allowed to wait for a place in the batch; beyond that `503 no_capacity` with `Retry-After`.',
      ),
    LLM_LOADING_RETRY_AFTER_SECONDS: env
      .positiveInt(5)
      .describe('`Retry-After` (seconds) of `503 model_loading`, while the model is still loading.'),
    LLM_LOAD_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Test only: delays model loading so tests can observe the `loading` state. Leave 0.'),
  })
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    ...modelWorkerSettings(e),
    defaultModel: e.LLM_DEFAULT_MODEL,
    dtype: e.LLM_DTYPE,
    // The shared worker runtime's queue goes unused here: the decoding loop queues for itself.
    queue: { concurrency: e.LLM_MAX_BATCH, depth: e.LLM_QUEUE_DEPTH },
    batching: {
      maxBatch: e.LLM_MAX_BATCH,
      cacheTokens: e.LLM_KV_CACHE_TOKENS,
      prefillChunkTokens: e.LLM_PREFILL_CHUNK_TOKENS,
      queueDepth: e.LLM_QUEUE_DEPTH,
      streamBufferEvents: e.LLM_STREAM_BUFFER_EVENTS,
    },
    loadingRetryAfterSeconds: e.LLM_LOADING_RETRY_AFTER_SECONDS,
    loadDelayMs: e.LLM_LOAD_DELAY_MS,
  }));

export type LlmConfig = ReturnType<typeof loadLlmConfig>;

export function loadLlmConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** The llm worker's environment schema, from which docs/configuration.md is generated. */
export const llmEnvSchema = schema.in;

/** Every variable the llm worker reads, so the chart and the runner can be checked against it. */
export const llmEnvVars = Object.keys(llmEnvSchema.shape);
