// The diffusion worker: the shared model-worker life (startModelWorker) with diffusers ONNX
// pipelines, the image service and its metrics, and the object store for the PNGs. Image
// generation takes turns in a batching queue of its own so requests can share UNet passes.
import { ConfigError } from '@switchboard/config';
import { startModelWorker, type RunningModelWorker } from '@switchboard/models';
import { createObjectStore } from '@switchboard/objectstore';
import { objectStoreProbe, type Logger } from '@switchboard/telemetry';
import { loadOnnxPipeline } from './adapters/onnx-pipeline.js';
import type { DiffusionConfig } from './config.js';
import { createGenerationQueue } from './images/generation-queue.js';
import { unknownBudgetModels } from './images/pixel-budget.js';
import { ImageService } from './images/service.js';
import { createDiffusionMetrics } from './metrics.js';
import { diffusionService } from './server.js';

export function startDiffusionWorker(config: DiffusionConfig, logger: Logger): Promise<RunningModelWorker> {
  const objects = createObjectStore(config.objectStore);
  return startModelWorker(
    {
      name: 'diffusion',
      config,
      createMetrics: createDiffusionMetrics,
      // Only S3 is a dependency that can be unreachable; the local folder fallback is not probed.
      dependencies: config.objectStore.s3 ? [objectStoreProbe(objects)] : [],
      load: (entry) => loadOnnxPipeline(entry, config.execution),
      dispose: (model) => model.dispose(),
      details: (model) => ({
        dtype: model.dtype,
        nativeWidth: model.nativeWidth,
        nativeHeight: model.nativeHeight,
      }),
      services: ({ models, metrics }) => {
        const unknown = unknownBudgetModels(
          config.maxPixels,
          models.list().map((m) => m.id),
        );
        if (unknown.length > 0) {
          throw new ConfigError(
            unknown.map((id) => `DIFFUSION_MAX_PIXELS: "${id}" is not a model folder in MODEL_DIR/diffusion`),
          );
        }
        // Generation answers 503 while the store is not ready; a store that is down must not stop
        // the worker from loading its models.
        objects.ensureReady().then(
          (report) =>
            logger.info({ s3: config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
          (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
        );
        const queue = createGenerationQueue(config.queue, metrics);
        const images = new ImageService(models, queue, metrics, objects, {
          defaultGuidanceScale: config.defaultGuidanceScale,
          maxPixels: config.maxPixels,
        });
        return [diffusionService(images)];
      },
    },
    logger,
  );
}
