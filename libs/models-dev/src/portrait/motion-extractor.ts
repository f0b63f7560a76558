// motion_extractor.onnx: `img` float32 [1, 3, 256, 256] (RGB in [0, 1]) → LivePortrait's M outputs,
// in the published order: `pitch`, `yaw`, `roll` [1, 66] (logits over 3° bins), `t` [1, 3],
// `exp` [1, 63] (expression offsets of the 21 keypoints), `scale` [1, 1], `kp` [1, 63] (canonical
// keypoints). A ConvNeXt-shaped stem (4×4 patchify, two 2×2 downsamplings), global average
// pooling, LayerNorm and one linear head per output, as the real convnextv2_tiny head.
//
// Each head's gain puts its output at a plausible size: keypoints spread over [−1, 1], small
// expression and translation offsets, a scale near 1, pose logits whose expectation is a few
// degrees from frontal.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import * as layers from '../onnx/layers.js';
import type { Random } from '../random.js';
import { constant } from '../diffusion/parameters.js';
import { MOTION_OUTPUTS, type PortraitShape } from './config.js';
import { conv, dense } from './layers.js';

export function buildMotionExtractorGraph(s: PortraitShape, rng: Random): Graph {
  const g = new Graph('tiny_motion_extractor');
  const p = { g, rng };
  const img = g.input('img', DataType.FLOAT, [1, 3, s.cropSize, s.cropSize]);
  const [w1, w2, w3] = [s.width, 2 * s.width, 4 * s.width];
  let x = conv(p, 'detector.downsample_layers.0.0', img, [3, w1], { kernel: [4, 4], stride: 4 });
  x = layers.gelu(g, x);
  x = conv(p, 'detector.downsample_layers.1.1', x, [w1, w2], { kernel: [2, 2], stride: 2 });
  x = layers.gelu(g, x);
  x = conv(p, 'detector.downsample_layers.2.1', x, [w2, w3], { kernel: [2, 2], stride: 2 });
  const pooled = op.reduceMean(g, x, [2, 3], false); // [1, w3]
  const features = layers.layerNorm(
    g,
    pooled,
    constant(p, 'detector.norm.weight', w3, 1),
    constant(p, 'detector.norm.bias', w3, 0),
    1e-6,
  );
  const k3 = 3 * s.keypoints;
  // [width, gain, bias] of each head.
  const heads: Record<(typeof MOTION_OUTPUTS)[number], readonly [number, number, number]> = {
    pitch: [s.poseBins, 1, 0],
    yaw: [s.poseBins, 1, 0],
    roll: [s.poseBins, 1, 0],
    t: [3, 0.02, 0],
    exp: [k3, 0.02, 0],
    scale: [1, 0.02, 1],
    kp: [k3, 0.3, 0],
  };
  for (const name of MOTION_OUTPUTS) {
    const [width, gain, bias] = heads[name];
    const y = dense(p, `detector.fc_${name}`, features, [w3, width], { gain, bias });
    g.output(y, name, DataType.FLOAT, [1, width]);
  }
  return g;
}
