// Initializers for model builders: seeded normal weights and constant LayerNorm/bias vectors.
// Weights are drawn in the order the builder asks for them, so a builder that always creates its
// initializers in the same order gets the same bytes from the same seed.
import type { Graph } from './graph.js';
import { floatTensor } from './tensor.js';
import type { Random } from '../random.js';

/** A named [dims] float32 initializer of normal samples with standard deviation `std`. */
export function normalWeight(
  g: Graph,
  rng: Random,
  name: string,
  dims: readonly number[],
  std: number,
): string {
  const count = dims.reduce((a, b) => a * b, 1);
  return g.initializer(name, floatTensor(rng.normals(count, std), dims));
}

/** A named [size] float32 initializer filled with `value` (LayerNorm scales 1, biases 0). */
export function filled(g: Graph, name: string, size: number, value: number): string {
  return g.initializer(name, floatTensor(new Float32Array(size).fill(value), [size]));
}
