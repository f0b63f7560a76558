// ModelProto assembly and binary encoding. IR version 8 is the one the ONNX release this schema
// comes from (1.10) writes, and every ONNX Runtime since 1.10 reads opset-17 graphs under it.
import type { Graph } from './graph.js';
import type { IModelProto } from './proto.js';
import { onnx } from './proto.js';

export const OPSET = 17;
const IR_VERSION = 8;

export interface ModelOptions {
  readonly producerName?: string;
  readonly docString?: string;
  /** Free-form key/value metadata stored in the model (visible in Netron, ORT's modelMetadata). */
  readonly metadata?: Readonly<Record<string, string>>;
}

export function modelProto(graph: Graph, options: ModelOptions = {}): IModelProto {
  return {
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: options.producerName ?? '@switchboard/models-dev',
    docString: options.docString ?? '',
    graph: graph.toProto(),
    metadataProps: Object.entries(options.metadata ?? {}).map(([key, value]) => ({ key, value })),
  };
}

/** Encodes a model to the bytes of a `.onnx` file. */
export function serializeModel(graph: Graph, options: ModelOptions = {}): Uint8Array {
  const model = modelProto(graph, options);
  const problem = onnx.ModelProto.verify(model);
  if (problem !== null) throw new Error(`invalid ModelProto: ${problem}`);
  return onnx.ModelProto.encode(model).finish();
}
