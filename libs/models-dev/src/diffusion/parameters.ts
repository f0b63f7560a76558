// Seeded parameters for the tiny diffusion graphs. A weight is drawn as N(0, (gain / √fan_in)²),
// so at gain 1 a layer keeps the scale of its input: activations stay near unit size through
// every block instead of growing or fading with depth, whatever the channel counts.
import type { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { floatTensor } from '../onnx/tensor.js';
import type { Random } from '../random.js';

/** Where a builder puts its nodes and draws its weights (one stream per graph). */
export interface Params {
  readonly g: Graph;
  readonly rng: Random;
}

/** A named weight of `dims`, N(0, (gain / √fanIn)²). */
export function weight(p: Params, name: string, dims: readonly number[], fanIn: number, gain = 1): string {
  const count = dims.reduce((a, b) => a * b, 1);
  return p.g.initializer(name, floatTensor(p.rng.normals(count, gain / Math.sqrt(fanIn)), dims));
}

/** A named [size] vector of one value: norm scales are 1, biases 0, as a fresh model starts. */
export function constant(p: Params, name: string, size: number, value: number): string {
  return p.g.initializer(name, floatTensor(new Float32Array(size).fill(value), [size]));
}

/** x · W + b over the last axis, with W stored [in, out] so the projection is one MatMul. */
export function linear(
  p: Params,
  name: string,
  x: string,
  dims: readonly [number, number],
  gain = 1,
): string {
  const [fanIn, out] = dims;
  const y = op.matmul(p.g, x, weight(p, `${name}.weight`, dims, fanIn, gain));
  return op.add(p.g, y, constant(p, `${name}.bias`, out, 0));
}
