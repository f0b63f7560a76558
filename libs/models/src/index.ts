/**
 * @switchboard/models — the model runtime every inference worker (llm, whisper, diffusion) shares.
 *
 *   const worker = await startModelWorker({                 // serves gRPC NOT_SERVING at once,
 *     name: 'llm', config, createMetrics: createLlmMetrics, // SERVING once the default is loaded
 *     load: (entry) => loadMyModel(entry), dispose: (model) => model.dispose(),
 *     services: ({ models, metrics }) => [myService(models, metrics)],
 *   }, logger);
 *   const { id, handle } = models.get(request.model);       // in a handler: or model_loading / unknown_model
 *   await worker.close();                                   // drain, free the models
 *
 * Repository   MODEL_DIR/<capability>/<model-id>/ with config.json or model_index.json; default
 *              = configured id, else `models.json` {"default": id}, else the first id.
 * Execution    ortEnvFields (ORT_EXECUTION_PROVIDERS, ORT_DEVICE_ID, ORT_INTRA_OP_THREADS) for the
 *              worker's config schema; transformersDeviceOptions → from_pretrained options.
 * Queues       WorkQueue (one job per slot), BatchingQueue (requests share passes), both refusing
 *              with no_capacity when full and taking turns by owner (FairLine).
 * Diffusion    betas, alphasCumprod, trainingSigmas: the training noise schedule the image
 *              worker's schedulers and the video back-end's sampler both start from.
 */
export {
  scanRepository,
  DEV_MODEL_KEY,
  MANIFEST_FILE,
  type ModelEntry,
  type RepositoryScan,
  type ScanOptions,
} from './repository.js';
export {
  ModelRegistry,
  modelInfoMessage,
  type ModelDetails,
  type ModelInfoMessage,
  type ModelListing,
  type ModelState,
  type ModelStatus,
  type RegistryOptions,
} from './registry.js';
export {
  ortEnvFields,
  executionProviderNames,
  transformersDeviceOptions,
  type ExecutionConfig,
  type ExecutionProviderName,
  type SessionOptions,
} from './execution.js';
export { WorkQueue, type WorkQueueOptions } from './queue.js';
export { FairLine } from './fair-line.js';
export {
  BatchingQueue,
  type BatchEntry,
  type BatchingQueueOptions,
  type BatchRunner,
} from './batching-queue.js';
export { useLocalModels } from './transformers-env.js';
export {
  startModelWorker,
  type ModelWorker,
  type ModelWorkerConfig,
  type ModelWorkerMetrics,
  type ModelWorkerSpec,
  type RunningModelWorker,
} from './worker.js';
export { SeededRandom } from './seeded-random.js';
export { alphasCumprod, betas, trainingSigmas, type TrainingNoiseConfig } from './training-noise.js';
export { modelWorkerEnvFields, modelWorkerSettings } from './worker-env.js';
export { fromFloat16Array, fromFloat16Bits, toFloat16Array, toFloat16Bits } from './float16.js';
export {
  demuxerFor,
  sniffBytesNeeded,
  sniffMedia,
  MAX_ID3_TAG_BYTES,
  SNIFF_HEAD_BYTES,
  type MediaKind,
  type SniffedMedia,
} from './media-sniff.js';
