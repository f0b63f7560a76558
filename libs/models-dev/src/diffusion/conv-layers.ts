// Image-shaped building blocks for the UNet and VAE decoder, over [batch, channels, height, width]
// tensors with symbolic spatial sizes. Only opset-17 operators: GroupNormalization arrives in
// opset 18, so group norm is InstanceNormalization over channel groups, as exporters lower it.
import { attr } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { floatTensor } from '../onnx/tensor.js';
import { constant, weight, type Params } from './parameters.js';

function one(outputs: string[]): string {
  const [out] = outputs;
  if (out === undefined) throw new Error('node produced no output');
  return out;
}

export interface ConvOptions {
  /** Square kernel size (odd); the padding keeps "same" size at stride 1. */
  readonly kernel?: number;
  /** 2 halves each side (rounding up), as the UNet's downsamplers do. */
  readonly stride?: number;
  /** Weight scale relative to 1/√fan_in. */
  readonly gain?: number;
}

/** A 2-D convolution with weight `${name}.weight` [out, in, k, k] and bias `${name}.bias` [out]. */
export function conv2d(
  p: Params,
  name: string,
  x: string,
  channels: readonly [number, number],
  options: ConvOptions = {},
): string {
  const { kernel = 3, stride = 1, gain = 1 } = options;
  const [inChannels, outChannels] = channels;
  const fanIn = inChannels * kernel * kernel;
  const w = weight(p, `${name}.weight`, [outChannels, inChannels, kernel, kernel], fanIn, gain);
  const b = constant(p, `${name}.bias`, outChannels, 0);
  const pad = (kernel - 1) / 2;
  return one(
    p.g.node('Conv', [x, w, b], {
      kernel_shape: attr.ints([kernel, kernel]),
      strides: attr.ints([stride, stride]),
      pads: attr.ints([pad, pad, pad, pad]),
    }),
  );
}

/** Reshape to a runtime shape (an int64 1-D tensor), for sizes only known from the inputs. */
export function reshapeLike(p: Params, x: string, shape: string): string {
  return one(p.g.node('Reshape', [x, shape]));
}

/**
 * GroupNorm over `groups` groups of channels: each group is normalised over its channels and
 * all positions, then scaled and shifted per channel (`${name}.weight`, `${name}.bias`).
 */
export function groupNorm(p: Params, name: string, x: string, channels: number, groups: number): string {
  if (channels % groups !== 0) throw new Error(`${channels} channels do not split into ${groups} groups`);
  const g = p.g;
  const grouped = op.reshape(g, x, [0, groups, -1]); // [b, groups, (channels / groups)·h·w]
  const normed = one(
    g.node(
      'InstanceNormalization',
      [grouped, constant(p, `${name}.group_scale`, groups, 1), constant(p, `${name}.group_bias`, groups, 0)],
      { epsilon: attr.float(1e-5) },
    ),
  );
  const restored = reshapeLike(p, normed, op.shape(g, x));
  const perChannel = (suffix: string, value: number): string =>
    op.reshape(g, constant(p, `${name}.${suffix}`, channels, value), [channels, 1, 1]);
  return op.add(g, op.mul(g, restored, perChannel('weight', 1)), perChannel('bias', 0));
}

/** SiLU (swish), x · sigmoid(x): the activation of Stable Diffusion's UNet and VAE. */
export function silu(p: Params, x: string): string {
  return op.mul(p.g, x, op.sigmoid(p.g, x));
}

/** GroupNorm then SiLU, the pre-activation every ResNet-style block here starts with. */
export function normActivate(p: Params, name: string, x: string, channels: number, groups: number): string {
  return silu(p, groupNorm(p, name, x, channels, groups));
}

// PyTorch's nearest upsampling: output pixel i reads input pixel floor(i / scale).
const NEAREST = {
  mode: attr.string('nearest'),
  coordinate_transformation_mode: attr.string('asymmetric'),
  nearest_mode: attr.string('floor'),
};

/** Nearest-neighbour ×`factor` upsampling of both spatial axes. */
export function upsample(p: Params, x: string, factor: number): string {
  const scales = p.g.constant(floatTensor([1, 1, factor, factor], [4]));
  return one(p.g.node('Resize', [x, '', scales], NEAREST));
}

/**
 * Nearest-neighbour resize of `x` to the spatial size of `like`: the UNet's way back up lands
 * exactly on its skip connection's size even when a stride-2 step rounded an odd size up.
 */
export function upsampleTo(p: Params, x: string, like: string): string {
  const g = p.g;
  const sizes = op.concat(g, [op.shape(g, x, 0, 2), op.shape(g, like, 2, 4)], 0);
  return one(g.node('Resize', [x, '', '', sizes], NEAREST));
}
