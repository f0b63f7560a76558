// Building blocks of the tiny portrait graphs: convolutions of any rank (the real networks use 2-D
// and 3-D ones), dense heads with a chosen bias, and the activations and resizes LivePortrait's
// modules are made of. Weights come from diffusion/parameters.ts (N(0, (gain/√fan_in)²)).
import { attr } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { floatTensor } from '../onnx/tensor.js';
import { constant, weight, type Params } from '../diffusion/parameters.js';

function one(outputs: string[]): string {
  const [out] = outputs;
  if (out === undefined) throw new Error('node produced no output');
  return out;
}

export interface ConvOptions {
  /** Kernel size per spatial axis; its length is the convolution's rank (2 or 3). */
  readonly kernel: readonly number[];
  /** Stride per axis; default 1. A stride equal to the kernel is a patchify/downsampling step. */
  readonly stride?: number;
  /** Weight scale relative to 1/√fan_in. */
  readonly gain?: number;
}

/**
 * A convolution with weight `${name}.weight` [out, in, ...kernel] and bias `${name}.bias` [out].
 * Odd kernels at stride 1 keep the size ("same" padding); other strides pad nothing.
 */
export function conv(
  p: Params,
  name: string,
  x: string,
  channels: readonly [number, number],
  options: ConvOptions,
): string {
  const { kernel, stride = 1, gain = 1 } = options;
  const [inChannels, outChannels] = channels;
  const fanIn = kernel.reduce((a, k) => a * k, inChannels);
  const w = weight(p, `${name}.weight`, [outChannels, inChannels, ...kernel], fanIn, gain);
  const b = constant(p, `${name}.bias`, outChannels, 0);
  const same = stride === 1 && kernel.every((k) => k % 2 === 1);
  const pads = kernel.map((k) => (same ? (k - 1) / 2 : 0));
  return one(
    p.g.node('Conv', [x, w, b], {
      kernel_shape: attr.ints(kernel),
      strides: attr.ints(kernel.map(() => stride)),
      pads: attr.ints([...pads, ...pads]),
    }),
  );
}

/** x · W + b over the last axis; W [in, out] is N(0, (gain/√in)²), b is filled with `bias`. */
export function dense(
  p: Params,
  name: string,
  x: string,
  dims: readonly [number, number],
  options: { gain?: number; bias?: number } = {},
): string {
  const [fanIn, out] = dims;
  const y = op.matmul(p.g, x, weight(p, `${name}.weight`, dims, fanIn, options.gain ?? 1));
  return op.add(p.g, y, constant(p, `${name}.bias`, out, options.bias ?? 0));
}

/** LeakyReLU with slope 0.2, the activation of LivePortrait's encoder and decoder blocks. */
export function leakyRelu(p: Params, x: string): string {
  return one(p.g.node('LeakyRelu', [x], { alpha: attr.float(0.2) }));
}

export function tanh(p: Params, x: string): string {
  return one(p.g.node('Tanh', [x]));
}

/** Bilinear ×`factor` upsampling of the two last axes, as torch's interpolate(align_corners=False). */
export function upsampleLinear(p: Params, x: string, factor: number): string {
  const scales = p.g.constant(floatTensor([1, 1, factor, factor], [4]));
  return one(
    p.g.node('Resize', [x, '', scales], {
      mode: attr.string('linear'),
      coordinate_transformation_mode: attr.string('half_pixel'),
    }),
  );
}
