import { z } from 'zod';
import { env, loadConfig } from '@switchboard/config';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';

/** Weight files Transformers.js can pick in a model folder, by its dtype names (see LLM_DTYPE). */
export const llmDtypes = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'] as const;
export type LlmDtype = (typeof llmDtypes)[number];

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50051, shutdownGraceMs: 20_000 }),
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
    LLM_CONCURRENCY: env
      .positiveInt(1)
      .describe('Generations running at once (each one holds its own KV cache).'),
    LLM_QUEUE_DEPTH: z.coerce
      .number()
      .int()
      .min(0)
      .default(16)
      .describe('Requests allowed to wait for a slot; beyond that `503 no_capacity` with `Retry-After`.'),
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
  .transform((e) => ({
    ...modelWorkerSettings(e),
    defaultModel: e.LLM_DEFAULT_MODEL,
    dtype: e.LLM_DTYPE,
    queue: { concurrency: e.LLM_CONCURRENCY, depth: e.LLM_QUEUE_DEPTH },
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
