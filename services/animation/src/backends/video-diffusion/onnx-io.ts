// Reading a part's contract from its ONNX Runtime session instead of assuming it: which declared
// input or output plays a role (by name, never by position), its element type and rank, and
// float tensors in and out in whichever float type the export declares (float32 or float16).
import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { fromFloat16Array, toFloat16Array } from '@switchboard/models';

export type FloatType = 'float32' | 'float16';

export interface InputSpec {
  readonly name: string;
  readonly type: string;
  readonly shape: readonly (number | string)[];
}

/** The declared tensor input `name` of `part`, or an error naming what the part declares. */
export function requireInput(session: InferenceSession, part: string, name: string): InputSpec {
  const meta = session.inputMetadata.find((m) => m.name === name);
  if (!meta?.isTensor) {
    throw new Error(`${part}: no tensor input "${name}" (it declares ${session.inputNames.join(', ')})`);
  }
  return { name, type: meta.type, shape: meta.shape };
}

/** The first of `names` the session declares as an input; else its only input. */
export function pickInput(session: InferenceSession, part: string, names: readonly string[]): InputSpec {
  const name =
    names.find((n) => session.inputNames.includes(n)) ?? onlyOne(session.inputNames, part, 'input', names);
  return requireInput(session, part, name);
}

/** The first of `names` the session declares as an output; else its only output. */
export function pickOutput(session: InferenceSession, part: string, names: readonly string[]): string {
  return (
    names.find((n) => session.outputNames.includes(n)) ?? onlyOne(session.outputNames, part, 'output', names)
  );
}

function onlyOne(declared: readonly string[], part: string, what: string, wanted: readonly string[]): string {
  const [only] = declared;
  if (declared.length === 1 && only !== undefined) return only;
  throw new Error(`${part}: no ${what} named ${wanted.join(' or ')} (it declares ${declared.join(', ')})`);
}

export function floatType(spec: InputSpec, part: string): FloatType {
  if (spec.type === 'float32' || spec.type === 'float16') return spec.type;
  throw new Error(`${part}: input "${spec.name}" is ${spec.type}; float32 or float16 expected`);
}

/** A float tensor of the declared type from float32 values. */
export function floatTensor(type: FloatType, values: Float32Array, dims: readonly number[]): Tensor {
  return type === 'float32'
    ? new Tensor('float32', values, dims)
    : new Tensor('float16', toFloat16Array(values), dims);
}

/** An integer tensor of the declared type and rank (0 or 1) holding one value. */
export function integerScalar(spec: InputSpec, part: string, value: number): Tensor {
  const dims = spec.shape.length === 0 ? [] : [1];
  if (spec.type === 'int64') return new Tensor('int64', BigInt64Array.of(BigInt(value)), dims);
  if (spec.type === 'int32') return new Tensor('int32', Int32Array.of(value), dims);
  throw new Error(`${part}: input "${spec.name}" is ${spec.type}; an integer type expected`);
}

/** A float output as float32 values with its dims. */
export function floatOutput(
  outputs: InferenceSession.ReturnType,
  part: string,
  name: string,
): { data: Float32Array; dims: readonly number[] } {
  const tensor = outputs[name];
  if (tensor?.type === 'float32') return { data: tensor.data as Float32Array, dims: tensor.dims };
  if (tensor?.type === 'float16')
    return { data: fromFloat16Array(tensor.data as Uint16Array), dims: tensor.dims };
  throw new Error(`${part}: output "${name}" is missing or not a float tensor`);
}

/** A declared dimension when it is a fixed number. */
export function fixedDim(spec: InputSpec, axis: number): number | undefined {
  const d = spec.shape[axis];
  return typeof d === 'number' && d > 0 ? d : undefined;
}
