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
