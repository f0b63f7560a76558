// Half-precision ("fp16") variants of built graphs, shaped like an fp16 export seen from outside:
// float inputs and outputs are float16, and every float weight is stored as float16. Inside, each
// half weight and input is Cast to float32 and the graph computes as before (ONNX Runtime's CPU
// kernels for half precision are few), so only the edges and the stored precision change.
import type { Graph } from './graph.js';
import type { IGraphProto, INodeProto, ITensorProto } from './proto.js';
import { onnx } from './proto.js';
import { modelProto, type ModelOptions } from './serialize.js';

const FLOAT = 1;
const FLOAT16 = 10;

const single = new Float32Array(1);
const singleBits = new Uint32Array(single.buffer);

/**
 * The float16 bit pattern nearest to `value` (ties to even; overflow to ±Infinity). The same
 * conversion as toFloat16Bits in @switchboard/models, which cannot be imported here: that
 * package's tests build their models with this one.
 */
export function float16Bits(value: number): number {
  single[0] = value;
  const bits = singleBits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const e = exponent - 112;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    if (rest > 1 << (shift - 1) || (rest === 1 << (shift - 1) && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = sign | (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return half;
}

function halfInitializer(t: ITensorProto, name: string): ITensorProto {
  const raw = t.rawData!;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new DataView(new ArrayBuffer(raw.byteLength / 2));
  for (let i = 0; i < raw.byteLength / 4; i++)
    out.setUint16(i * 2, float16Bits(view.getFloat32(i * 4, true)), true);
  return { name, dataType: FLOAT16, dims: t.dims ?? [], rawData: new Uint8Array(out.buffer) };
}

const cast = (input: string, output: string, to: number): INodeProto => ({
  name: `${output}/Cast`,
  opType: 'Cast',
  input: [input],
  output: [output],
  attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: to }],
});

/**
 * The graph with float weights stored as float16 and float inputs/outputs typed float16; inputs
 * named in `halfInputs` (e.g. an int64 timestep) become float16 too, cast back to their type.
 */
export function toFloat16Graph(graph: IGraphProto, halfInputs: readonly string[] = []): IGraphProto {
  const front: INodeProto[] = [];
  const back: INodeProto[] = [];
  const initializer = (graph.initializer ?? []).map((t) => {
    if (t.dataType !== FLOAT) return t;
    front.push(cast(`${t.name}_fp16`, t.name!, FLOAT));
    return halfInitializer(t, `${t.name}_fp16`);
  });
  const renamed = new Map<string, string>();
  const input = (graph.input ?? []).map((v) => {
    const type = v.type!.tensorType!;
    if (type.elemType !== FLOAT && !halfInputs.includes(v.name!)) return v;
    renamed.set(v.name!, `${v.name}_cast`);
    front.push(cast(v.name!, `${v.name}_cast`, type.elemType!));
    return { ...v, type: { tensorType: { ...type, elemType: FLOAT16 } } };
  });
  const outputNames = new Set(
    (graph.output ?? []).filter((v) => v.type!.tensorType!.elemType === FLOAT).map((v) => v.name!),
  );
  const node = (graph.node ?? []).map((n) => ({
    ...n,
    input: (n.input ?? []).map((name) => renamed.get(name) ?? name),
    output: (n.output ?? []).map((name) => {
      if (!outputNames.has(name)) return name;
      back.push(cast(`${name}_fp32`, name, FLOAT16));
      return `${name}_fp32`;
    }),
  }));
  const output = (graph.output ?? []).map((v) =>
    outputNames.has(v.name!)
      ? { ...v, type: { tensorType: { ...v.type!.tensorType!, elemType: FLOAT16 } } }
      : v,
  );
  return { ...graph, input, output, initializer, node: [...front, ...node, ...back] };
}

/** serializeModel for the fp16 variant of `graph`. */
export function serializeFloat16Model(
  graph: Graph,
  options: ModelOptions = {},
  halfInputs: readonly string[] = [],
): Uint8Array {
  const model = modelProto(graph, options);
  model.graph = toFloat16Graph(model.graph!, halfInputs);
  const problem = onnx.ModelProto.verify(model);
  if (problem !== null) throw new Error(`invalid ModelProto: ${problem}`);
  return onnx.ModelProto.encode(model).finish();
}
