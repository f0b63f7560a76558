// stitching.onnx, stitching_eye.onnx, stitching_lip.onnx: LivePortrait's stitching and retargeting
// MLPs (Linear + ReLU, a linear last layer), `input` float32 [1, in] → `output` float32 [1, out]:
//   stitching  in 126 = the flattened source and driving keypoints (2 · 21 · 3)
//              out 65 = a keypoint offset (21 · 3) and a tx, ty shift (2)
//   eye        in 66 = source keypoints (63) + [c_s,eyes (2), c_d,eyes (1)], out 63
//   lip        in 65 = source keypoints (63) + [c_s,lip (1), c_d,lip (1)],  out 63
// The last layer's small gain keeps the corrections small, as the trained ones are.
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { PortraitShape } from './config.js';
import { dense } from './layers.js';

export type StitchingKind = 'stitching' | 'eye' | 'lip';

/** [input width, output width] of each MLP for `keypoints` keypoints. */
export function stitchingDims(kind: StitchingKind, keypoints: number): readonly [number, number] {
  const k3 = 3 * keypoints;
  switch (kind) {
    case 'stitching':
      return [2 * k3, k3 + 2];
    case 'eye':
      return [k3 + 3, k3];
    case 'lip':
      return [k3 + 2, k3];
  }
}

export function buildStitchingGraph(s: PortraitShape, kind: StitchingKind, rng: Random): Graph {
  const g = new Graph(`tiny_${kind}`);
  const p = { g, rng };
  const [inputs, outputs] = stitchingDims(kind, s.keypoints);
  let x = g.input('input', DataType.FLOAT, [1, inputs]);
  let width = inputs;
  s.mlpHidden.forEach((hidden, i) => {
    x = op.relu(g, dense(p, `mlp.${2 * i}`, x, [width, hidden]));
    width = hidden;
  });
  const y = dense(p, `mlp.${2 * s.mlpHidden.length}`, x, [width, outputs], { gain: 0.01 });
  g.output(y, 'output', DataType.FLOAT, [1, outputs]);
  return g;
}
