// unet/model.onnx: a tiny spatio-temporal UNet with the inputs and output of Stability's TensorRT
// SVD release as NVIDIA's TensorRT diffusion demo exports UNetSpatioTemporalConditionModel:
//   sample                 float32 [2B, num_frames, 8, H, W]  noisy latents (scaled by the scheduler)
//                                                             ++ the image's VAE latents, channel axis
//   timestep               float32 [1]                        0.25 · ln σ (continuous timesteps)
//   encoder_hidden_states  float32 [2B, 1, 1024]              CLIP image embedding (zeros: uncond)
//   added_time_ids         float32 [2B, 3]                    fps − 1, motion_bucket_id, noise_aug
//   → latent               float32 [2B, num_frames, 4, H, W]  the v-prediction
//
// Layout: the frames are flattened into the batch; conv_in plus the time bias (timestep and added
// time ids, repeated per frame) at the latent resolution; a stride-2 convolution down to ÷2, where
// the image embedding comes in by cross-attention and a temporal convolution mixes neighbouring
// frames; back up with a nearest resize, a skip connection and another temporal convolution.
//
// Random weights cannot predict v. As the image UNet predicts "the input is all noise" plus a
// correction, this one predicts the clean latents D (what conv_out computes from every input) and
// returns the v that makes the Euler step land there: with α = 1/√(σ²+1), s = σα and the scaled
// input x, v = (αx − D)/s, since the scheduler's denoised estimate is αx − s·v. Sampling then
// behaves (the latents shrink from σ = 700 to finite values) and every input still matters.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { conv2d, normActivate, upsampleTo } from '../diffusion/conv-layers.js';
import type { Params } from '../diffusion/parameters.js';
import { crossAttention, timeBias, timestepEmbedding } from '../diffusion/unet-blocks.js';
import { ADDED_TIME_IDS, type VideoDiffusionShape } from './config.js';
import {
  addedTimeEmbedding,
  exp,
  flattenFrames,
  repeatPerFrame,
  temporalConv,
  unflattenFrames,
} from './video-layers.js';

/** The symbolic dims of the TensorRT demo's dynamic axes. */
export const UNET_DIMS = { batch: '2B', frames: 'num_frames', height: 'H', width: 'W' } as const;

/** Scale of conv_out relative to 1/√fan_in: the spread of the predicted clean latents. */
const CLEAN_GAIN = 0.5;

/** σ-dependent coefficients from the continuous timestep t = 0.25 · ln σ: α = 1/√(σ²+1), s = σα. */
function sigmaScales(g: Graph, timestep: string): { alpha: string; s: string } {
  const sigma = exp(g, op.mul(g, timestep, op.scalar(g, 4)));
  const alpha = op.div(g, op.scalar(g, 1), op.sqrt(g, op.add(g, op.mul(g, sigma, sigma), op.scalar(g, 1))));
  return { alpha, s: op.mul(g, sigma, alpha) };
}

export function buildUnetGraph(s: VideoDiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_unet_spatio_temporal');
  const { batch, frames, height, width } = UNET_DIMS;
  const lc = s.latentChannels;
  const sample = g.input('sample', DataType.FLOAT, [batch, frames, 2 * lc, height, width]);
  const timestep = g.input('timestep', DataType.FLOAT, [1]);
  const context = g.input('encoder_hidden_states', DataType.FLOAT, [batch, 1, s.imageEmbedDim]);
  const addedTimeIds = g.input('added_time_ids', DataType.FLOAT, [batch, ADDED_TIME_IDS.length]);
  const p: Params = { g, rng };
  const [c0, c1] = s.unetChannels;
  const groups = s.normGroups;
  const E = s.timeEmbedDim;

  const images = flattenFrames(p, sample); // [2B·F, 8, H, W]
  const emb = g.scope('time', () => {
    const t = timestepEmbedding(p, timestep, c0, E); // [1, E]
    const added = addedTimeEmbedding(p, addedTimeIds, ADDED_TIME_IDS.length, s.additionTimeEmbedDim, E);
    return repeatPerFrame(p, op.add(g, t, added), sample); // [2B·F, E]
  });
  const perFrameContext = repeatPerFrame(p, context, sample); // [2B·F, 1, 1024]
  const temporal = (name: string, x: string, channels: number): string =>
    g.scope(name, () => {
      const mixed = temporalConv(
        p,
        name,
        unflattenFrames(p, normActivate(p, `${name}.norm`, x, channels, groups), sample),
        channels,
      );
      return op.add(g, x, flattenFrames(p, mixed));
    });

  const h0 = op.add(
    g,
    conv2d(p, 'conv_in', images, [2 * lc, c0]),
    timeBias(p, 'down_blocks.0.resnets.0.time_emb_proj', emb, E, c0),
  );
  const d1 = g.scope('down', () => {
    const activated = normActivate(p, 'down_blocks.0.norm', h0, c0, groups);
    const down = conv2d(p, 'down_blocks.0.downsamplers.0.conv', activated, [c0, c1], { stride: 2 });
    return op.add(g, down, timeBias(p, 'mid_block.resnets.0.time_emb_proj', emb, E, c1));
  }); // ÷2
  const attended = g.scope('mid', () =>
    crossAttention(p, 'mid_block.attentions.0', d1, perFrameContext, {
      channels: c1,
      contextDim: s.imageEmbedDim,
      heads: s.unetHeads,
      groups,
    }),
  );
  const mid = temporal('mid_block.temporal', attended, c1);
  const up = g.scope('up', () => {
    const resized = upsampleTo(p, normActivate(p, 'up_blocks.1.norm', mid, c1, groups), h0);
    return op.add(g, conv2d(p, 'up_blocks.1.upsamplers.0.conv', resized, [c1, c0]), h0);
  });
  const mixed = temporal('up_blocks.1.temporal', up, c0);
  const clean = conv2d(p, 'conv_out', normActivate(p, 'conv_norm_out', mixed, c0, groups), [c0, lc], {
    gain: CLEAN_GAIN,
  });

  // The v that makes the scheduler's denoised estimate αx − s·v equal the predicted clean latents.
  const [noisy = ''] = op.split(g, images, 1, 2);
  const { alpha, s: sScale } = sigmaScales(g, timestep);
  const v = op.div(g, op.sub(g, op.mul(g, alpha, noisy), clean), sScale);
  g.output(unflattenFrames(p, v, sample), 'latent', DataType.FLOAT, [batch, frames, lc, height, width]);
  return g;
}
