// Thin, typed wrappers over ONNX opset-17 operators. Each returns the name of its output value.
// Where an operator takes shapes or axes as inputs (opset 13+), the wrapper creates the int64
// constant, so call sites read like the math.
import { attr, type Graph } from './graph.js';
import { floatTensor, int64Tensor, type DataType } from './tensor.js';

function one(outputs: string[]): string {
  const [out] = outputs;
  if (out === undefined) throw new Error('node produced no output');
  return out;
}

const binary =
  (op: string) =>
  (g: Graph, a: string, b: string): string =>
    one(g.node(op, [a, b]));

const unary =
  (op: string) =>
  (g: Graph, x: string): string =>
    one(g.node(op, [x]));

export const add = binary('Add');
export const sub = binary('Sub');
export const mul = binary('Mul');
export const div = binary('Div');
export const matmul = binary('MatMul');
export const and = binary('And');
export const lessOrEqual = binary('LessOrEqual');
export const greaterOrEqual = binary('GreaterOrEqual');
export const equal = binary('Equal');
export const greater = binary('Greater');
/** Element-wise minimum of two tensors (broadcasting). */
export const min = binary('Min');
/** Integer remainder with the sign of the divisor (Mod with fmod = 0). */
export const mod = binary('Mod');
export const neg = unary('Neg');
export const sqrt = unary('Sqrt');
export const sigmoid = unary('Sigmoid');
export const cos = unary('Cos');
export const sin = unary('Sin');
export const erf = unary('Erf');
export const relu = unary('Relu');
export const abs = unary('Abs');
export const ceil = unary('Ceil');

/** A float32 scalar constant (rank 0, broadcasts against anything). */
export function scalar(g: Graph, value: number): string {
  return g.constant(floatTensor([value], []));
}

/** An int64 constant: a scalar when `values` is a number, else a 1-D tensor. */
export function ints(g: Graph, values: number | readonly number[]): string {
  return typeof values === 'number'
    ? g.constant(int64Tensor([values], []))
    : g.constant(int64Tensor(values, [values.length]));
}

export function cast(g: Graph, x: string, to: DataType): string {
  return one(g.node('Cast', [x], { to: attr.int(to) }));
}

/** Shape of `x`, optionally only dims [start, end) (opset 15). */
export function shape(g: Graph, x: string, start?: number, end?: number): string {
  const attrs = {
    ...(start === undefined ? {} : { start: attr.int(start) }),
    ...(end === undefined ? {} : { end: attr.int(end) }),
  };
  return one(g.node('Shape', [x], attrs));
}

/** Dimension `axis` of `x` as an int64 scalar (for Range and arithmetic on sizes). */
export function dim(g: Graph, x: string, axis: number): string {
  return squeeze(g, shape(g, x, axis, axis + 1), [0]);
}

export function reshape(g: Graph, x: string, dims: readonly number[]): string {
  return one(g.node('Reshape', [x, ints(g, dims)]));
}

export function transpose(g: Graph, x: string, perm: readonly number[]): string {
  return one(g.node('Transpose', [x], { perm: attr.ints(perm) }));
}

export function unsqueeze(g: Graph, x: string, axes: readonly number[]): string {
  return one(g.node('Unsqueeze', [x, ints(g, axes)]));
}

export function squeeze(g: Graph, x: string, axes: readonly number[]): string {
  return one(g.node('Squeeze', [x, ints(g, axes)]));
}

export function concat(g: Graph, xs: readonly string[], axis: number): string {
  return one(g.node('Concat', xs, { axis: attr.int(axis) }));
}

/** Splits `x` into `parts` equal pieces along `axis`. */
export function split(g: Graph, x: string, axis: number, parts: number): string[] {
  return g.node('Split', [x], { axis: attr.int(axis) }, parts);
}

export function gather(g: Graph, data: string, indices: string, axis = 0): string {
  return one(g.node('Gather', [data, indices], { axis: attr.int(axis) }));
}

export function softmax(g: Graph, x: string, axis = -1): string {
  return one(g.node('Softmax', [x], { axis: attr.int(axis) }));
}

/** Opset 17 ReduceMean takes `axes` as an attribute (it became an input in opset 18). */
export function reduceMean(g: Graph, x: string, axes: readonly number[], keepdims = true): string {
  return one(g.node('ReduceMean', [x], { axes: attr.ints(axes), keepdims: attr.int(keepdims ? 1 : 0) }));
}

/** Opset 17 ReduceMax/ReduceMin take `axes` as an attribute, like ReduceMean. */
export function reduceMax(g: Graph, x: string, axes: readonly number[], keepdims = true): string {
  return one(g.node('ReduceMax', [x], { axes: attr.ints(axes), keepdims: attr.int(keepdims ? 1 : 0) }));
}

export function reduceMin(g: Graph, x: string, axes: readonly number[], keepdims = true): string {
  return one(g.node('ReduceMin', [x], { axes: attr.ints(axes), keepdims: attr.int(keepdims ? 1 : 0) }));
}

/** int64 [start, limit) with step 1; `start` and `limit` are int64 scalars. */
export function range(g: Graph, start: string, limit: string): string {
  return one(g.node('Range', [start, limit, ints(g, 1)]));
}

export function where(g: Graph, condition: string, x: string, y: string): string {
  return one(g.node('Where', [condition, x, y]));
}

/** 1-D convolution over [batch, channels, length] with weight [out, in, kernel] and bias [out]. */
export function conv1d(
  g: Graph,
  x: string,
  weight: string,
  bias: string,
  options: { kernel: number; stride: number; pad: number },
): string {
  return one(
    g.node('Conv', [x, weight, bias], {
      kernel_shape: attr.ints([options.kernel]),
      strides: attr.ints([options.stride]),
      pads: attr.ints([options.pad, options.pad]),
    }),
  );
}

/** LayerNormalization (new in opset 17) over the last axis: (x − mean) / sqrt(var + eps) · scale + bias. */
export function layerNormalization(g: Graph, x: string, scale: string, bias: string, eps: number): string {
  return one(
    g.node('LayerNormalization', [x, scale, bias], { axis: attr.int(-1), epsilon: attr.float(eps) }),
  );
}

/** Clamps `x` to [min, max]; the bounds are float32 scalars. */
export function clip(g: Graph, x: string, min: number, max: number): string {
  return one(g.node('Clip', [x, scalar(g, min), scalar(g, max)]));
}
