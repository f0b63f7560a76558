// Encoding at an opset other than the builders' default (onnx/serialize.ts writes opset 17): the
// warping graph needs opset 20, the first where GridSample takes 5-D input (volumetric sampling of
// the feature volume; opsets 16–19 define it for 4-D only). Every operator it uses keeps its
// opset-17 meaning at 20 (it has no ReduceMean/Split, whose signatures changed at 18).
import type { Graph } from '../onnx/graph.js';
import { onnx } from '../onnx/proto.js';
import { modelProto, type ModelOptions } from '../onnx/serialize.js';

/** The IR version each ONNX release writes alongside its newest opset (ONNX's versioning table). */
const IR_VERSION_FOR_OPSET: Readonly<Record<number, number>> = { 17: 8, 18: 8, 19: 9, 20: 9, 21: 10 };

export function serializeModelAtOpset(graph: Graph, opset: number, options: ModelOptions = {}): Uint8Array {
  const irVersion = IR_VERSION_FOR_OPSET[opset];
  if (irVersion === undefined) throw new Error(`no IR version known for opset ${opset}`);
  const model = { ...modelProto(graph, options), irVersion, opsetImport: [{ domain: '', version: opset }] };
  const problem = onnx.ModelProto.verify(model);
  if (problem !== null) throw new Error(`invalid ModelProto: ${problem}`);
  return onnx.ModelProto.encode(model).finish();
}
