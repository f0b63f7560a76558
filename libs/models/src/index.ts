/**
 * @switchboard/models — the model runtime every inference worker (llm, whisper, diffusion) shares.
 *
 *   const scan = await scanRepository(config.modelDir, 'llm', { defaultModel: config.defaultModel });
 *   useLocalModels(scan.capabilityDir);              // Transformers.js: local files only
 *   const registry = new ModelRegistry({ scan, logger, load: (entry) => loadMyModel(entry) });
 *   registry.loadAll().then(() => server.health.setAll('SERVING'));
 *   const { id, handle } = registry.get(request.model); // or model_loading / unknown_model
 *   await queue.run(() => work(handle), ctx.signal);     // or no_capacity when full
 *
 * Repository   MODEL_DIR/<capability>/<model-id>/ with config.json or model_index.json; default
 *              = configured id, else `models.json` {"default": id}, else the first id.
 * Execution    ortEnvFields (ORT_EXECUTION_PROVIDERS, ORT_DEVICE_ID, ORT_INTRA_OP_THREADS) for the
 *              worker's config schema; transformersDeviceOptions → from_pretrained options.
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
  runModelWorker,
  type ModelWorker,
  type ModelWorkerConfig,
  type ModelWorkerMetrics,
  type ModelWorkerSpec,
} from './worker.js';
export { SeededRandom } from './seeded-random.js';
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
