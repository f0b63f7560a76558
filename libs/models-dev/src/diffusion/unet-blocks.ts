// The UNet's conditioning pieces: the timestep as sinusoidal features through a small MLP (added
// to feature maps as a per-channel bias), and cross-attention from image positions to the text
// encoder's states (how the prompt steers the prediction).
import { attend, mergeHeads, splitHeads } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import { groupNorm, reshapeLike, silu } from './conv-layers.js';
import { linear, weight, type Params } from './parameters.js';

/**
 * Sinusoidal features of `timestep` [steps] (any numeric type): cos then sin of t · 10000^(−i/half)
 * (diffusers' Timesteps with flip_sin_to_cos and no frequency shift), then linear → SiLU → linear.
 * Returns [steps, embedDim].
 */
export function timestepEmbedding(p: Params, timestep: string, features: number, embedDim: number): string {
  const g = p.g;
  const half = features / 2;
  const freqs = Float32Array.from({ length: half }, (_, i) => Math.exp((-Math.log(10000) * i) / half));
  const t = op.unsqueeze(g, op.cast(g, timestep, DataType.FLOAT), [1]); // [steps, 1]
  const angles = op.mul(g, t, g.constant(floatTensor(freqs, [1, half]))); // [steps, half]
  const sinusoid = op.concat(g, [op.cos(g, angles), op.sin(g, angles)], 1);
  const hidden = silu(p, linear(p, 'time_embedding.linear_1', sinusoid, [features, embedDim]));
  return linear(p, 'time_embedding.linear_2', hidden, [embedDim, embedDim]);
}

/**
 * The time embedding projected to `channels` and shaped [steps, channels, 1, 1], to add to a
 * [batch, channels, h, w] map: one timestep serves the whole batch (steps = 1), or one per item.
 */
export function timeBias(
  p: Params,
  name: string,
  embedding: string,
  embedDim: number,
  channels: number,
): string {
  // Gain 2: the bias must move the features visibly, or the prediction would ignore the step.
  const projected = linear(p, name, silu(p, embedding), [embedDim, channels], 2);
  return op.unsqueeze(p.g, projected, [2, 3]);
}

// Random queries and keys at unit scale give nearly uniform attention: every position would see
// the average of the 77 text states, mostly padding, and the prompt would barely matter. Larger
// query/key weights sharpen attention onto a few tokens; a larger output projection makes what
// it reads count against the skip connection.
const QK_GAIN = 3;
const OUT_GAIN = 2;

export interface CrossAttentionShape {
  readonly channels: number;
  readonly contextDim: number;
  readonly heads: number;
  readonly groups: number;
}

/**
 * x + attention(GroupNorm(x) as queries, text states as keys and values): every position of the
 * [batch, channels, h, w] map looks at the prompt's tokens. Keys are the 77 text states, so the
 * cost grows only linearly with the number of positions.
 */
export function crossAttention(
  p: Params,
  prefix: string,
  x: string,
  context: string,
  shape: CrossAttentionShape,
): string {
  const g = p.g;
  const { channels: c, contextDim, heads } = shape;
  const headDim = c / heads;
  const normed = groupNorm(p, `${prefix}.norm`, x, c, shape.groups);
  const positions = op.transpose(g, op.reshape(g, normed, [0, 0, -1]), [0, 2, 1]); // [b, h·w, c]
  const project = (name: string, from: string, fanIn: number, gain: number): string =>
    splitHeads(
      g,
      op.matmul(g, from, weight(p, `${prefix}.${name}.weight`, [fanIn, c], fanIn, gain)),
      heads,
      headDim,
    );
  const attended = attend(
    g,
    project('to_q', positions, c, QK_GAIN),
    project('to_k', context, contextDim, QK_GAIN),
    project('to_v', context, contextDim, 1),
    headDim,
  );
  const out = linear(p, `${prefix}.to_out.0`, mergeHeads(g, attended, heads, headDim), [c, c], OUT_GAIN);
  const back = reshapeLike(p, op.transpose(g, out, [0, 2, 1]), op.shape(g, x)); // [b, c, h, w]
  return op.add(g, x, back);
}
