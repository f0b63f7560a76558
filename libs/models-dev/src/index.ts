export { Graph, attr, tensorProto, type Attr, type Dim } from './onnx/graph.js';
export * as ops from './onnx/ops.js';
export * as layers from './onnx/layers.js';
export { DataType, floatTensor, int64Tensor, boolTensor, type TensorData } from './onnx/tensor.js';
export { serializeModel, modelProto, OPSET, type ModelOptions } from './onnx/serialize.js';
export { Random } from './random.js';
export { writeModelFolder } from './write.js';
export { buildTinyTokenizer, SPECIAL_TOKENS, type TinyTokenizer } from './tokenizer/files.js';
export {
  DEV_MODEL_MARKER,
  llamaConfigJson,
  generationConfigJson,
  type LlamaShape,
  type SpecialTokenIds,
} from './llama/config.js';
export { buildLlamaGraph, DIMS } from './llama/graph.js';
export { buildTinyLlama, tinyLlamaFiles, type TinyLlama, type TinyLlamaOptions } from './llama/build.js';
export { CHATML_CHAT_TEMPLATE } from './llama/chat-template.js';
export { byteLevelTokenizerJson, byteLevelVocabulary, type AddedToken } from './tokenizer/json.js';
export {
  WHISPER_LANGUAGES,
  TIME_PRECISION,
  TIMESTAMP_COUNT,
  whisperSpecialTokens,
  type WhisperLanguage,
  type WhisperTokenIds,
} from './whisper/tokens.js';
export {
  buildWhisperTokenizer,
  type WhisperTokenizer,
  type WhisperTokenizerOptions,
} from './whisper/tokenizer.js';
export { AUDIO, type WhisperShape } from './whisper/config.js';
export { buildEncoderGraph } from './whisper/encoder.js';
export { buildDecoderGraph, DECODER_DIMS, type DecoderWeights } from './whisper/decoder.js';
export { WINDOW_TOKENS, STEPS_PER_TOKEN } from './whisper/logits-prior.js';
export {
  buildTinyWhisper,
  tinyWhisperFiles,
  type TinyWhisper,
  type TinyWhisperOptions,
} from './whisper/build.js';
export {
  buildWhisperFromConfig,
  publishedWhisperLayout,
  readPublishedWhisper,
  whisperFromConfigFiles,
  type PublishedWhisperConfigs,
  type PublishedWhisperLayout,
  type WhisperFromConfig,
  type WhisperFromConfigOptions,
} from './whisper/from-config.js';
export { setMelBins, slaneyMelFilters, type MelOptions } from './whisper/mel.js';
export {
  buildTinyDiffusion,
  tinyDiffusionFiles,
  type TinyDiffusion,
  type TinyDiffusionOptions,
} from './diffusion/build.js';
export type { ClipTokenIds, DiffusionShape } from './diffusion/config.js';
export type { SchedulerKind } from './diffusion/scheduler.js';
export {
  buildTinyPortrait,
  tinyPortraitFiles,
  TINY_PORTRAIT_SHAPE,
  type TinyPortrait,
  type TinyPortraitOptions,
} from './portrait/build.js';
export { PORTRAIT_FILES, type PortraitShape } from './portrait/config.js';
export {
  buildTinyVideoDiffusion,
  tinyVideoDiffusionFiles,
  TINY_VIDEO_DIFFUSION_SHAPE,
  type TinyVideoDiffusion,
  type TinyVideoDiffusionOptions,
} from './video-diffusion/build.js';
export type { VideoDiffusionShape } from './video-diffusion/config.js';
