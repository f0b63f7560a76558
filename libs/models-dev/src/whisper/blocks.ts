// Whisper's transformer pieces, shared by the encoder and decoder graphs: linear layers with
// Hugging Face's parameter names (k_proj has no bias, as in Whisper), multi-head attention, the
// GELU MLP and pre-LayerNorm residual blocks. Weights are [in, out] so projections are MatMuls.
import type { Graph } from '../onnx/graph.js';
import { attend, gelu, layerNorm, mergeHeads, splitHeads } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { filled, normalWeight } from '../onnx/weights.js';
import type { Random } from '../random.js';

export interface BlockContext {
  readonly g: Graph;
  readonly rng: Random;
  readonly dModel: number;
  readonly heads: number;
  readonly eps: number;
}

const headDim = (c: BlockContext): number => c.dModel / c.heads;

/**
 * Standard deviation of weights, times 1/√fan_in. At gain 1 a random transformer is close to
 * linear: its hidden state barely changes from token to token and greedy decoding falls into
 * one-token loops ("mmmm…"). At gain 2 it is sensitive enough to the context (and the audio) that
 * the random text varies, while LayerNorm keeps every activation finite.
 */
const GAIN = 2;

/** x · W (+ b), W ~ N(0, GAIN²/in). Biases start at zero, as in Hugging Face's initialisation. */
export function linear(
  c: BlockContext,
  name: string,
  x: string,
  dims: [number, number],
  bias = true,
): string {
  const y = op.matmul(c.g, x, normalWeight(c.g, c.rng, `${name}.weight`, dims, GAIN / Math.sqrt(dims[0])));
  return bias ? op.add(c.g, y, filled(c.g, `${name}.bias`, dims[1], 0)) : y;
}

export function norm(c: BlockContext, name: string, x: string): string {
  return layerNorm(
    c.g,
    x,
    filled(c.g, `${name}.weight`, c.dModel, 1),
    filled(c.g, `${name}.bias`, c.dModel, 0),
    c.eps,
  );
}

/** Keys and values of `x` [batch, len, dModel] split into heads: [batch, heads, len, headDim] each. */
export function keysValues(c: BlockContext, prefix: string, x: string): { key: string; value: string } {
  const d = c.dModel;
  return {
    key: splitHeads(c.g, linear(c, `${prefix}.k_proj`, x, [d, d], false), c.heads, headDim(c)),
    value: splitHeads(c.g, linear(c, `${prefix}.v_proj`, x, [d, d]), c.heads, headDim(c)),
  };
}

/** Queries from `x`, attention over the given keys/values (optionally masked), output projection. */
export function attentionOutput(
  c: BlockContext,
  prefix: string,
  x: string,
  kv: { key: string; value: string },
  visible?: string,
): string {
  const d = c.dModel;
  const q = splitHeads(c.g, linear(c, `${prefix}.q_proj`, x, [d, d]), c.heads, headDim(c));
  const attended = attend(c.g, q, kv.key, kv.value, headDim(c), visible);
  return linear(c, `${prefix}.out_proj`, mergeHeads(c.g, attended, c.heads, headDim(c)), [d, d]);
}

/** fc2(gelu(fc1(x))). */
export function mlp(c: BlockContext, prefix: string, x: string, ffnDim: number): string {
  const hidden = gelu(c.g, linear(c, `${prefix}.fc1`, x, [c.dModel, ffnDim]));
  return linear(c, `${prefix}.fc2`, hidden, [ffnDim, c.dModel]);
}

/** Pre-LayerNorm residual block: x + f(LayerNorm(x)). */
export function residual(
  c: BlockContext,
  normName: string,
  x: string,
  f: (normed: string) => string,
): string {
  return op.add(c.g, x, f(norm(c, normName, x)));
}
