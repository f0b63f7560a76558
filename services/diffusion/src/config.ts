import { z } from 'zod';
import { checkGrpcServerTlsEnv, env, loadConfig } from '@switchboard/config';
import { modelWorkerEnvFields, modelWorkerSettings } from '@switchboard/models';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import type { PixelBudgets } from './images/pixel-budget.js';

/** A pixel budget below 64×64, the smallest size the API allows, would refuse every request. */
const budget = z
  .number()
  .int()
  .min(64 * 64, 'must be an integer of at least 4096 (64×64)');

/**
 * DIFFUSION_MAX_PIXELS: one number for every model, or `{"<model id>": n, "*": n}` where `*`
 * covers the models not named. Unset (or a model not covered) = derived from the model's config.
 */
const maxPixels = z
  .union([budget, z.record(z.string().min(1), budget)], {
    error: 'expected a number of pixels or a JSON object of model id → pixels',
  })
  .transform((value): PixelBudgets => {
    if (typeof value === 'number') return { fallback: value, models: {} };
    const { '*': fallback, ...models } = value;
    return { fallback, models };
  });

const schema = z
  .object({
    ...modelWorkerEnvFields({ grpcPort: 50053, shutdownGraceMs: 60_000 }),
    ...env.tracingEnvFields,
    ...objectStoreEnvFields,
    DIFFUSION_DEFAULT_MODEL: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Default pipeline id; unset = MODEL_DIR/diffusion/models.json\'s `"default"`, else the first folder.',
      ),
    DIFFUSION_CONCURRENCY: env
      .positiveInt(1)
      .describe(
        'Batches denoised at once (each of up to `DIFFUSION_MAX_BATCH` images); each batch uses all cores ONNX Runtime is given.',
      ),
    DIFFUSION_QUEUE_DEPTH: z.coerce
      .number()
      .int()
      .min(0)
      .default(8)
      .describe(
        'Requests allowed to wait for a slot (they form the next batches); beyond that `503 no_capacity` with `Retry-After`.',
      ),
    // images/generation-queue.ts: waiting requests of one model, size, step count and guidance
    // on/off share UNet passes; a lone request never waits for company.
    DIFFUSION_MAX_BATCH: env
      .positiveInt(4)
      .describe(
        'Most waiting requests denoised together in one UNet batch (same model, width, height, steps and guidance on/off); each image stays identical to the one it gives alone. Bounds activation memory, which grows with batch × 2 (guidance) × latent size (width × height / 64); 1 turns batching off.',
      ),
    DIFFUSION_DEFAULT_GUIDANCE_SCALE: z.coerce
      .number()
      .min(0)
      .max(30)
      .default(7.5)
      .describe(
        '`guidance_scale` when a request gives none, 0 to 30 (7.5 suits Stable Diffusion 1.x/2.x; 0 suits SD-Turbo).',
      ),
    // images/pixel-budget.ts: bounds the memory one request can take, so a pod is sized once.
    DIFFUSION_MAX_PIXELS: env.json(maxPixels, '{}').meta({
      description:
        'Most width × height one request may ask of a model: one integer for every model, or JSON `{"<model id>": pixels, "*": pixels}` (`*` = models not named); at least 4096; an id that is not a model folder stops start-up. Over it → `400 invalid_request`.',
      docsDefault: "4 × each model's native size",
    }),
    DIFFUSION_LOADING_RETRY_AFTER_SECONDS: env
      .positiveInt(5)
      .describe('`Retry-After` (seconds) of `503 model_loading`, while the model is still loading.'),
    DIFFUSION_LOAD_DELAY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Test only: delays model loading so tests can observe the `loading` state. Leave 0.'),
  })
  .superRefine(checkObjectStoreEnv)
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    ...modelWorkerSettings(e),
    defaultModel: e.DIFFUSION_DEFAULT_MODEL,
    queue: {
      concurrency: e.DIFFUSION_CONCURRENCY,
      depth: e.DIFFUSION_QUEUE_DEPTH,
      maxBatch: e.DIFFUSION_MAX_BATCH,
    },
    defaultGuidanceScale: e.DIFFUSION_DEFAULT_GUIDANCE_SCALE,
    maxPixels: e.DIFFUSION_MAX_PIXELS,
    loadingRetryAfterSeconds: e.DIFFUSION_LOADING_RETRY_AFTER_SECONDS,
    loadDelayMs: e.DIFFUSION_LOAD_DELAY_MS,
    objectStore: objectStoreConfigFrom(e),
  }));

export type DiffusionConfig = ReturnType<typeof loadDiffusionConfig>;

export function loadDiffusionConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** The diffusion worker's environment schema, from which docs/configuration.md is generated. */
export const diffusionEnvSchema = schema.in;

/** Every variable the diffusion worker reads, so the chart and the runner can be checked against it. */
export const diffusionEnvVars = Object.keys(diffusionEnvSchema.shape);
