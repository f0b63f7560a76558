// Graph pieces for video tensors. The UNet takes [batch, frames, channels, h, w] but runs its
// spatial layers on [batch · frames, channels, h, w] images (as diffusers flattens them), so these
// move between the two layouts with runtime shapes, repeat per-video conditioning once per frame
// (repeat_interleave), and mix neighbouring frames with a (3, 1, 1) Conv3d, the temporal layer
// SVD's spatio-temporal blocks and its temporal decoder use.
import { attr, type Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import { reshapeLike } from '../diffusion/conv-layers.js';
import { constant, linear, weight, type Params } from '../diffusion/parameters.js';

function one(outputs: string[]): string {
  const [out] = outputs;
  if (out === undefined) throw new Error('node produced no output');
  return out;
}

export function exp(g: Graph, x: string): string {
  return one(g.node('Exp', [x]));
}

/** [batch, frames, ...rest] → [batch · frames, ...rest]. */
export function flattenFrames(p: Params, video: string): string {
  const g = p.g;
  return reshapeLike(p, video, op.concat(g, [op.ints(g, [-1]), op.shape(g, video, 2)], 0));
}

/** [batch · frames, ...rest] → [batch, frames, ...rest], batch and frames read from `video`. */
export function unflattenFrames(p: Params, x: string, video: string): string {
  const g = p.g;
  return reshapeLike(p, x, op.concat(g, [op.shape(g, video, 0, 2), op.shape(g, x, 1)], 0));
}

/**
 * [batch, ...rest] → [batch · frames, ...rest], each row repeated for its video's frames in a row
 * (torch's repeat_interleave over dim 0): what the UNet does to the time embedding and the image
 * embedding so that every frame of a video sees its video's conditioning.
 */
export function repeatPerFrame(p: Params, x: string, video: string): string {
  const g = p.g;
  const target = op.concat(g, [op.shape(g, video, 0, 2), op.shape(g, x, 1)], 0);
  const expanded = one(g.node('Expand', [op.unsqueeze(g, x, [1]), target]));
  return reshapeLike(p, expanded, op.concat(g, [op.ints(g, [-1]), op.shape(g, x, 1)], 0));
}

/**
 * A temporal convolution over [batch, frames, channels, h, w]: each position of each frame becomes
 * a weighted sum of the same position in the frame before, itself and the frame after (zero
 * padding at the clip's ends), per output channel. Weight `${name}.weight` [c, c, 3, 1, 1].
 */
export function temporalConv(p: Params, name: string, video: string, channels: number, gain = 1): string {
  const g = p.g;
  const fanIn = channels * 3;
  const w = weight(p, `${name}.weight`, [channels, channels, 3, 1, 1], fanIn, gain);
  const b = constant(p, `${name}.bias`, channels, 0);
  const channelsFirst = op.transpose(g, video, [0, 2, 1, 3, 4]); // [b, c, frames, h, w]
  const mixed = one(
    g.node('Conv', [channelsFirst, w, b], {
      kernel_shape: attr.ints([3, 1, 1]),
      pads: attr.ints([1, 0, 0, 1, 0, 0]),
    }),
  );
  return op.transpose(g, mixed, [0, 2, 1, 3, 4]);
}

/**
 * Sinusoidal features of every value of `x` (any shape, flattened): cos then sin of
 * x · 10000^(−i/half), diffusers' Timesteps with flip_sin_to_cos and no shift. Returns [n, features].
 */
export function sinusoid(g: Graph, x: string, features: number): string {
  const half = features / 2;
  const freqs = Float32Array.from({ length: half }, (_, i) => Math.exp((-Math.log(10000) * i) / half));
  const values = op.reshape(g, op.cast(g, x, DataType.FLOAT), [-1, 1]); // [n, 1]
  const angles = op.mul(g, values, g.constant(floatTensor(freqs, [1, half])));
  return op.concat(g, [op.cos(g, angles), op.sin(g, angles)], 1);
}

/**
 * SVD's added-time embedding: each of the [batch, ids] values (fps − 1, motion bucket, noise
 * augmentation) as `features` sinusoid features, concatenated per row, then linear → SiLU → linear
 * (`add_embedding.linear_1/2`) to [batch, embedDim], to be added to the timestep's embedding.
 */
export function addedTimeEmbedding(
  p: Params,
  addedTimeIds: string,
  ids: number,
  features: number,
  embedDim: number,
): string {
  const g = p.g;
  const perRow = op.reshape(g, sinusoid(g, addedTimeIds, features), [-1, ids * features]);
  const hidden = linear(p, 'add_embedding.linear_1', perRow, [ids * features, embedDim]);
  const activated = op.mul(g, hidden, op.sigmoid(g, hidden));
  return linear(p, 'add_embedding.linear_2', activated, [embedDim, embedDim]);
}
