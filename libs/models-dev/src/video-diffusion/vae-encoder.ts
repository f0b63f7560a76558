// vae_encoder/model.onnx: `sample` float32 [batch, 3, height, width] (RGB in [−1, 1]) →
// `latent_sample` float32 [batch, 4, height/8, width/8], the mode (mean) of the latent
// distribution with NO scaling factor applied: what SVD concatenates to the noisy latents.
// A much reduced AutoencoderKL encoder: conv_in, one stride-2 convolution per block after the
// first, conv_out to the distribution's 2 × 4 moments, quant_conv, then the mean half.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { conv2d, normActivate } from '../diffusion/conv-layers.js';
import type { Params } from '../diffusion/parameters.js';
import type { VideoDiffusionShape } from './config.js';

export const VAE_ENCODER_DIMS = { batch: 'batch_size', height: 'height', width: 'width' } as const;

export function buildVaeEncoderGraph(s: VideoDiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_vae_encoder');
  const { batch, height, width } = VAE_ENCODER_DIMS;
  const pixels = g.input('sample', DataType.FLOAT, [batch, 3, height, width]);
  const p: Params = { g, rng };
  const channels = s.vaeChannels;
  const groups = s.normGroups;
  const first = channels[0] ?? 0;
  const last = channels[channels.length - 1] ?? 0;
  const lc = s.latentChannels;

  let x = conv2d(p, 'encoder.conv_in', pixels, [3, first]);
  for (let i = 1; i < channels.length; i++) {
    const [from = 0, to = 0] = [channels[i - 1], channels[i]];
    const name = `encoder.down_blocks.${i - 1}`;
    x = g.scope(name, () =>
      conv2d(p, `${name}.downsamplers.0.conv`, normActivate(p, `${name}.norm`, x, from, groups), [from, to], {
        stride: 2,
      }),
    );
  }
  const moments = conv2d(p, 'encoder.conv_out', normActivate(p, 'encoder.conv_norm_out', x, last, groups), [
    last,
    2 * lc,
  ]);
  const quantized = conv2d(p, 'quant_conv', moments, [2 * lc, 2 * lc], { kernel: 1 });
  // DiagonalGaussianDistribution: the first half of the channels is the mean (the mode), the
  // second the log-variance, which the mode never needs.
  const [mean = ''] = op.split(g, quantized, 1, 2);
  const scale = 2 ** (channels.length - 1);
  g.output(mean, 'latent_sample', DataType.FLOAT, [batch, lc, `${height}/${scale}`, `${width}/${scale}`]);
  return g;
}
