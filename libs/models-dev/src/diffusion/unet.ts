// unet/model.onnx: a tiny conditional UNet with the inputs and output of Optimum's Stable
// Diffusion export: `sample` float32 [batch, 4, height, width] (any size), `timestep` int64
// [steps] (one value for the whole batch, or one per item), `encoder_hidden_states` float32
// [batch, sequence, hidden] → `out_sample` float32 [batch, 4, height, width].
//
// Layout: conv_in plus the time bias at the latent resolution; two stride-2 convolutions down to
// ÷4, where the time bias comes in again and cross-attention reads the prompt (cheap: a 128×128
// latent has 1,024 positions there); back up with nearest resizes and skip connections; conv_out.
//
// The prediction is `sample + conv_out(…)`. Random weights cannot predict noise; predicting
// "the input is all noise" plus a conditioned correction is what makes sampling behave: each
// scheduler step then removes part of the noise, the latents shrink towards a finite image
// instead of keeping the initial sigma, and the correction (which depends on the timestep, the
// prompt and the latents) is what guidance amplifies and the picture shows.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { DiffusionShape } from './config.js';
import { conv2d, normActivate, upsampleTo } from './conv-layers.js';
import type { Params } from './parameters.js';
import { crossAttention, timeBias, timestepEmbedding } from './unet-blocks.js';

export const UNET_DIMS = {
  batch: 'batch_size',
  height: 'height',
  width: 'width',
  steps: 'steps',
  sequence: 'sequence_length',
} as const;

/** Scale of conv_out relative to 1/√fan_in: how far the correction moves the prediction. */
const CORRECTION_GAIN = 0.5;

export function buildUnetGraph(s: DiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_unet');
  const { batch, height, width, steps, sequence } = UNET_DIMS;
  const sample = g.input('sample', DataType.FLOAT, [batch, s.latentChannels, height, width]);
  const timestep = g.input('timestep', DataType.INT64, [steps]);
  const context = g.input('encoder_hidden_states', DataType.FLOAT, [batch, sequence, s.textHidden]);
  const p: Params = { g, rng };
  const [c0, c1] = s.unetChannels;
  const groups = s.normGroups;

  const temb = g.scope('time', () => timestepEmbedding(p, timestep, s.timeFeatures, s.timeEmbedDim));
  const h0 = op.add(
    g,
    conv2d(p, 'conv_in', sample, [s.latentChannels, c0]),
    timeBias(p, 'down_blocks.0.time_emb_proj', temb, s.timeEmbedDim, c0),
  );
  const down = (name: string, x: string, channels: [number, number]): string => {
    const activated = normActivate(p, `${name}.norm`, x, channels[0], groups);
    return conv2d(p, `${name}.downsamplers.0.conv`, activated, channels, { stride: 2 });
  };
  const d1 = g.scope('down.0', () => down('down_blocks.0', h0, [c0, c1])); // ÷2
  const d2 = g.scope('down.1', () => {
    const bias = timeBias(p, 'mid_block.time_emb_proj', temb, s.timeEmbedDim, c1);
    return op.add(g, down('down_blocks.1', d1, [c1, c1]), bias);
  }); // ÷4
  const mid = g.scope('mid', () =>
    crossAttention(p, 'mid_block.attentions.0', d2, context, {
      channels: c1,
      contextDim: s.textHidden,
      heads: s.unetHeads,
      groups,
    }),
  );
  const up = (name: string, x: string, skip: string, channels: [number, number]): string => {
    const resized = upsampleTo(p, normActivate(p, `${name}.norm`, x, channels[0], groups), skip);
    return op.add(g, conv2d(p, `${name}.upsamplers.0.conv`, resized, channels), skip);
  };
  const u1 = g.scope('up.0', () => up('up_blocks.0', mid, d1, [c1, c1])); // ÷2
  const u0 = g.scope('up.1', () => up('up_blocks.1', u1, h0, [c1, c0])); // latent resolution
  const activated = normActivate(p, 'conv_norm_out', u0, c0, groups);
  const correction = conv2d(p, 'conv_out', activated, [c0, s.latentChannels], { gain: CORRECTION_GAIN });
  const latentDims = [batch, s.latentChannels, height, width];
  g.output(op.add(g, sample, correction), 'out_sample', DataType.FLOAT, latentDims);
  return g;
}
