// audio2motion/model.onnx — our contract, not a published export (LivePortrait has no audio input):
//   in   `audio`  float32 [batch_size, samples]: mono PCM in [−1, 1] at config.sample_rate (16 kHz);
//                 `samples` a whole number of motion frames (sample_rate / fps = 640 each).
//   out  per motion frame, at config.fps (25), in the motion extractor's parameterisation and
//        relative to the source portrait (zero motion = the source as it is):
//        `exp`    [batch_size, frames, 63]  expression offsets, added to the source's `exp`
//        `pose`   [batch_size, frames, 3]   pitch, yaw, roll changes in degrees
//        `t`      [batch_size, frames, 3]   translation change
//        `scale`  [batch_size, frames, 1]   scale ratio (1 = unchanged)
// The tiny graph: 40 ms windows projected to features, a 3-tap temporal convolution for context,
// linear heads. Silence gives exactly zero motion (all biases are zero, tanh(0) = 0).
import { Graph } from '../onnx/graph.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { PortraitShape } from './config.js';
import { conv, dense, tanh } from './layers.js';

export const AUDIO_DIMS = { batch: 'batch_size', samples: 'samples', frames: 'frames' } as const;

/** Largest head turn the tiny model makes, in degrees. */
const MAX_POSE_DEGREES = 5;

export function buildAudioMotionGraph(s: PortraitShape, rng: Random): Graph {
  const g = new Graph('tiny_audio2motion');
  const p = { g, rng };
  const { batch, samples, frames } = AUDIO_DIMS;
  const window = s.audioSampleRate / s.motionFps;
  if (!Number.isInteger(window)) throw new Error('sample rate must be a multiple of the motion fps');
  const audio = g.input('audio', DataType.FLOAT, [batch, samples]);
  const windows = op.reshape(g, audio, [0, -1, window]); // [b, frames, window]
  let x = tanh(p, dense(p, 'encoder.proj', windows, [window, s.width], { gain: 4 }));
  const timeFirst = op.transpose(g, x, [0, 2, 1]); // [b, width, frames]
  const context = conv(p, 'encoder.temporal', timeFirst, [s.width, s.width], { kernel: [3] });
  x = tanh(p, op.transpose(g, context, [0, 2, 1]));

  const k3 = 3 * s.keypoints;
  g.output(dense(p, 'head.exp', x, [s.width, k3], { gain: 0.02 }), 'exp', DataType.FLOAT, [
    batch,
    frames,
    k3,
  ]);
  const pose = op.mul(g, tanh(p, dense(p, 'head.pose', x, [s.width, 3])), op.scalar(g, MAX_POSE_DEGREES));
  g.output(pose, 'pose', DataType.FLOAT, [batch, frames, 3]);
  g.output(dense(p, 'head.t', x, [s.width, 3], { gain: 0.01 }), 't', DataType.FLOAT, [batch, frames, 3]);
  const ratio = op.mul(g, tanh(p, dense(p, 'head.scale', x, [s.width, 1])), op.scalar(g, 0.02));
  g.output(op.add(g, ratio, op.scalar(g, 1)), 'scale', DataType.FLOAT, [batch, frames, 1]);
  return g;
}
