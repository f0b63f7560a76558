// onnx-proto ships a CommonJS protobufjs static module (`module.exports = $root`), which Node
// exposes to ESM only as a default export; re-export its `onnx` namespace from one place.
import onnxProto from 'onnx-proto';
import type { onnx as OnnxTypes } from 'onnx-proto';

export const onnx = onnxProto.onnx;
export type IModelProto = OnnxTypes.IModelProto;
export type IGraphProto = OnnxTypes.IGraphProto;
export type INodeProto = OnnxTypes.INodeProto;
export type ITensorProto = OnnxTypes.ITensorProto;
export type IValueInfoProto = OnnxTypes.IValueInfoProto;
export type IAttributeProto = OnnxTypes.IAttributeProto;
