// vae_decoder/model.onnx: `latent_sample` float32 [batch, 4, height, width] (already divided by
// the scaling factor) → `sample` float32 [batch, 3, 8·height, 8·width], RGB around [−1, 1].
// A much reduced AutoencoderKL decoder: channels follow the config's block_out_channels reversed,
// one 3×3 convolution per block, and a nearest ×2 upsample into every block after the first.
//
// The first GroupNorm takes the latents to unit scale whatever their size, so the picture's
// contrast does not depend on how far the sampler shrank them; conv_out's gain then sets the
// pixels' spread so that most values sit inside [−1, 1] and few are clamped.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { DiffusionShape } from './config.js';
import { conv2d, normActivate, upsample } from './conv-layers.js';
import type { Params } from './parameters.js';

export const VAE_DIMS = { batch: 'batch_size', height: 'height', width: 'width' } as const;

/** conv_out's scale relative to 1/√fan_in: pixels come out with a standard deviation near 0.3. */
const PIXEL_GAIN = 0.6;

export function buildVaeDecoderGraph(s: DiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_vae_decoder');
  const { batch, height, width } = VAE_DIMS;
  const latent = g.input('latent_sample', DataType.FLOAT, [batch, s.latentChannels, height, width]);
  const p: Params = { g, rng };
  const channels = [...s.vaeChannels].reverse();
  const groups = s.normGroups;
  const first = channels[0] ?? 0;

  let x = conv2d(p, 'decoder.conv_in', latent, [s.latentChannels, first]);
  const mid = normActivate(p, 'decoder.mid_block.norm', x, first, groups);
  x = op.add(g, x, conv2d(p, 'decoder.mid_block.conv', mid, [first, first]));
  for (let i = 1; i < channels.length; i++) {
    const [from = 0, to = 0] = [channels[i - 1], channels[i]];
    const name = `decoder.up_blocks.${i - 1}`;
    // Normalise and activate before upsampling: the same result as after (nearest copies
    // pixels), on a quarter of the pixels.
    const resized = upsample(p, normActivate(p, `${name}.norm`, x, from, groups), 2);
    x = g.scope(name, () => conv2d(p, `${name}.upsamplers.0.conv`, resized, [from, to]));
  }
  const last = channels[channels.length - 1] ?? 0;
  const activated = normActivate(p, 'decoder.conv_norm_out', x, last, groups);
  const rgb = conv2d(p, 'decoder.conv_out', activated, [last, 3], { gain: PIXEL_GAIN });
  const scale = 2 ** (channels.length - 1);
  g.output(rgb, 'sample', DataType.FLOAT, [batch, 3, `${scale}*${height}`, `${scale}*${width}`]);
  return g;
}
