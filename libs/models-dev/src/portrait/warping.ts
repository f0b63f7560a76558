// warping_spade.onnx: `feature_3d` float32 [1, 32, 16, 64, 64], `kp_driving` float32 [1, 21, 3],
// `kp_source` float32 [1, 21, 3] (in that order, as published) → `out` float32 [1, 3, 512, 512],
// RGB in [0, 1]. LivePortrait's warping module W and SPADE decoder G in one graph, as the
// published export has them, reduced to their mechanism:
//
//   dense motion  every point p of a 16×32×32 grid over the volume (coordinates (x, y, z) in
//                 [−1, 1], x along width, as make_coordinate_grid; half the real 64×64 density, so
//                 a frame costs a quarter of the sampling) takes a softmax over 21 Gaussian keypoint
//                 heatmaps around kp_driving plus a background; it samples the source at
//                 p + Σ_k w_k (kp_source_k − kp_driving_k), LivePortrait's sparse motions blended.
//   warp          a 5-D GridSample of the feature volume at that deformation (opset 20: linear,
//                 zeros padding, align_corners = 0, as torch's grid_sample call).
//   decode        the volume flattened to 512 channels at 32×32, convolutions and two bilinear
//                 upsamplings to 512×512, a sigmoid into [0, 1].
//
// The heatmaps are built with matrix products (|p|² − 2 p·kd + |kd|²) rather than a per-keypoint
// difference tensor, so a frame costs milliseconds on a CPU.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { attr } from '../onnx/graph.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { PortraitShape } from './config.js';
import { conv, leakyRelu, upsampleLinear } from './layers.js';

/** LivePortrait's kp_variance: the heatmaps' Gaussian variance in grid units. */
const KP_VARIANCE = 0.01;
/** conv_img's gain: the sigmoid's input spreads over a few units, so pixels use most of [0, 1]. */
const PIXEL_GAIN = 6;
/** The background's logit: voxels further than about 0.2 from every keypoint stay put. */
const BACKGROUND_LOGIT = -2;

/** Voxel coordinates of a depth×size×size volume, row-major (z, y, x), as [voxels, 3] (x, y, z). */
function identityGrid(depth: number, size: number): Float32Array {
  const axis = (i: number, n: number) => (n === 1 ? 0 : (2 * i) / (n - 1) - 1);
  const grid = new Float32Array(depth * size * size * 3);
  let at = 0;
  for (let z = 0; z < depth; z++) {
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        grid[at++] = axis(x, size);
        grid[at++] = axis(y, size);
        grid[at++] = axis(z, depth);
      }
    }
  }
  return grid;
}

/** The warped volume's side: the feature volume's, halved (see the top of this file). */
const sampleSize = (s: PortraitShape): number => s.featureSize / 2;

/** The sampling grid [1, depth, side, side, 3] for the driving keypoints. */
function deformation(g: Graph, s: PortraitShape, kpDriving: string, kpSource: string): string {
  const { featureDepth: depth, keypoints: k } = s;
  const size = sampleSize(s);
  const voxels = depth * size * size;
  const coords = identityGrid(depth, size);
  const squares = Float32Array.from({ length: voxels }, (_, i) => {
    const [x = 0, y = 0, z = 0] = coords.subarray(3 * i, 3 * i + 3);
    return x * x + y * y + z * z;
  });
  return g.scope('dense_motion_network', () => {
    const grid = g.initializer('dense_motion_network.identity_grid', floatTensor(coords, [voxels, 3]));
    const gridSquares = g.initializer('dense_motion_network.grid_squares', floatTensor(squares, [voxels, 1]));
    const kd = op.reshape(g, kpDriving, [k, 3]);
    const ks = op.reshape(g, kpSource, [k, 3]);
    const cross = op.matmul(g, grid, op.transpose(g, kd, [1, 0])); // [voxels, k]
    const kdSquares = op.transpose(
      g,
      op.matmul(g, op.mul(g, kd, kd), g.constant(floatTensor([1, 1, 1], [3, 1]))),
      [1, 0],
    ); // [1, k]
    const distances = op.add(g, op.sub(g, gridSquares, op.mul(g, cross, op.scalar(g, 2))), kdSquares);
    const heat = op.mul(g, distances, op.scalar(g, -1 / (2 * KP_VARIANCE)));
    const background = op.add(g, op.mul(g, gridSquares, op.scalar(g, 0)), op.scalar(g, BACKGROUND_LOGIT));
    const weights = op.softmax(g, op.concat(g, [background, heat], 1), 1); // [voxels, 1 + k]
    const shifts = op.concat(g, [g.constant(floatTensor([0, 0, 0], [1, 3])), op.sub(g, ks, kd)], 0);
    const sampled = op.add(g, grid, op.matmul(g, weights, shifts)); // [voxels, 3]
    return op.reshape(g, sampled, [1, depth, size, size, 3]);
  });
}

export function buildWarpingGraph(s: PortraitShape, rng: Random): Graph {
  if (!Number.isInteger(s.outputSize / sampleSize(s) / 4))
    throw new Error('outputSize must be 2·featureSize·k');
  const g = new Graph('tiny_warping_spade');
  const p = { g, rng };
  const { featureChannels: c, featureDepth: d, featureSize: size, keypoints: k } = s;
  const feature = g.input('feature_3d', DataType.FLOAT, [1, c, d, size, size]);
  const kpDriving = g.input('kp_driving', DataType.FLOAT, [1, k, 3]);
  const kpSource = g.input('kp_source', DataType.FLOAT, [1, k, 3]);

  const grid = deformation(g, s, kpDriving, kpSource);
  const [warped] = g.node('GridSample', [feature, grid], {
    mode: attr.string('linear'),
    padding_mode: attr.string('zeros'),
    align_corners: attr.int(0),
  });
  if (warped === undefined) throw new Error('GridSample produced no output');

  const side = sampleSize(s);
  let x = op.reshape(g, warped, [1, c * d, side, side]);
  x = leakyRelu(p, conv(p, 'third', x, [c * d, s.width], { kernel: [1, 1] }));
  x = leakyRelu(p, conv(p, 'spade_generator.fc', x, [s.width, s.width], { kernel: [3, 3] }));
  x = upsampleLinear(p, x, s.outputSize / side / 4); // two upsamplings: this, then ×4
  x = conv(p, 'spade_generator.conv_img', x, [s.width, 3], { kernel: [3, 3], gain: PIXEL_GAIN });
  const rgb = op.sigmoid(g, upsampleLinear(p, x, 4));
  g.output(rgb, 'out', DataType.FLOAT, [1, 3, s.outputSize, s.outputSize]);
  return g;
}
