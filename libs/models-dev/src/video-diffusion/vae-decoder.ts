// vae_decoder/model.onnx: the temporal decoder. `latent_sample` float32 [frames, 4, height, width]
// (the latents of consecutive frames of one clip, already divided by the scaling factor) →
// `sample` float32 [frames, 3, 8·height, 8·width], RGB around [−1, 1]. As in diffusers'
// AutoencoderKLTemporalDecoder the batch axis is the frames axis, and after conv_out a (3, 1, 1)
// Conv3d, time_conv_out, mixes each pixel with the same pixel of the neighbouring frames.
// Otherwise a much reduced AutoencoderKL decoder, like the image pipeline's.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { conv2d, normActivate, upsample } from '../diffusion/conv-layers.js';
import type { Params } from '../diffusion/parameters.js';
import type { VideoDiffusionShape } from './config.js';
import { temporalConv } from './video-layers.js';

export const VAE_DECODER_DIMS = { frames: 'num_frames', height: 'height', width: 'width' } as const;

/** conv_out's scale relative to 1/√fan_in: pixels come out with a standard deviation near 0.3. */
const PIXEL_GAIN = 0.6;

export function buildVaeDecoderGraph(s: VideoDiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_temporal_vae_decoder');
  const { frames, height, width } = VAE_DECODER_DIMS;
  const latent = g.input('latent_sample', DataType.FLOAT, [frames, s.latentChannels, height, width]);
  const p: Params = { g, rng };
  const channels = [...s.vaeChannels].reverse();
  const groups = s.normGroups;
  const first = channels[0] ?? 0;
  const last = channels[channels.length - 1] ?? 0;

  let x = conv2d(p, 'decoder.conv_in', latent, [s.latentChannels, first]);
  const mid = normActivate(p, 'decoder.mid_block.norm', x, first, groups);
  x = op.add(g, x, conv2d(p, 'decoder.mid_block.conv', mid, [first, first]));
  for (let i = 1; i < channels.length; i++) {
    const [from = 0, to = 0] = [channels[i - 1], channels[i]];
    const name = `decoder.up_blocks.${i - 1}`;
    // Normalise and activate before upsampling: the same result as after, on a quarter of the pixels.
    const resized = upsample(p, normActivate(p, `${name}.norm`, x, from, groups), 2);
    x = g.scope(name, () => conv2d(p, `${name}.upsamplers.0.conv`, resized, [from, to]));
  }
  const activated = normActivate(p, 'decoder.conv_norm_out', x, last, groups);
  const rgb = conv2d(p, 'decoder.conv_out', activated, [last, 3], { gain: PIXEL_GAIN });
  // One clip: [frames, 3, H, W] → [1, frames, 3, H, W] for the temporal convolution, and back.
  const clip = op.unsqueeze(g, rgb, [0]);
  const mixed = op.squeeze(g, temporalConv(p, 'decoder.time_conv_out', clip, 3), [0]);
  const scale = 2 ** (channels.length - 1);
  g.output(mixed, 'sample', DataType.FLOAT, [frames, 3, `${scale}*${height}`, `${scale}*${width}`]);
  return g;
}
