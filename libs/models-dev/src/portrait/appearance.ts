// appearance_feature_extractor.onnx: `img` float32 [1, 3, 256, 256] (RGB in [0, 1]) → `output`
// float32 [1, 32, 16, 64, 64], the source's 3-D appearance feature volume (LivePortrait's F).
// As in the real network: 2-D features at 64×64, a 1×1 convolution to channels·depth, a reshape
// into a volume, and 3-D convolution on it; here one layer of each, a few channels wide.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { PortraitShape } from './config.js';
import { conv, leakyRelu } from './layers.js';

export function buildAppearanceGraph(s: PortraitShape, rng: Random): Graph {
  const g = new Graph('tiny_appearance_feature_extractor');
  const p = { g, rng };
  const { featureChannels: c, featureDepth: d, featureSize: size } = s;
  const img = g.input('img', DataType.FLOAT, [1, 3, s.cropSize, s.cropSize]);
  const patch = s.cropSize / size;
  let x = conv(p, 'first', img, [3, s.width], { kernel: [patch, patch], stride: patch });
  x = leakyRelu(p, x);
  x = conv(p, 'second', x, [s.width, c * d], { kernel: [1, 1] });
  const volume = op.reshape(g, x, [1, c, d, size, size]);
  // One residual 3-D block, as the real resblocks_3d: the volume keeps its scale.
  const block = conv(p, 'resblocks_3d.0.conv1', leakyRelu(p, volume), [c, c], { kernel: [1, 1, 1] });
  g.output(op.add(g, volume, block), 'output', DataType.FLOAT, [1, c, d, size, size]);
  return g;
}
