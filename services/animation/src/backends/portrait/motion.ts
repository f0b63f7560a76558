// The motion applied to the source portrait, one value per output frame, whichever driver made it:
// a rotation, expression offsets, a translation change and a scale ratio, all relative to the
// source as it is (no motion = the source's own keypoints). Both drivers reduce to this, so the
// keypoint path from here to the warping model is one path.
//
// From a driving video it is LivePortrait's relative motion against the first driving frame
// (live_portrait_pipeline.py, animation_region "all", pose-friendly):
//   R = R_d,i · R_d,0ᵀ · R_s    δ = δ_s + (δ_d,i − δ_d,0)    s = s_s · s_d,i / s_d,0    t = t_s + (t_d,i − t_d,0)
// From audio it is what the audio-to-motion model predicts, in the same terms.
import {
  IDENTITY,
  multiply,
  placeKeypoints,
  rotationMatrix,
  rotationOf,
  transpose,
  type KeypointInfo,
  type Mat3,
  type Vec3,
} from './keypoints.js';

export interface Motion {
  /** Applied on top of the source's rotation: R = rotation · R_s. */
  readonly rotation: Mat3;
  /** Added to the source's expression offsets, [keypoints · 3]. */
  readonly exp: Float32Array;
  /** Added to the source's translation. */
  readonly t: Vec3;
  /** Multiplies the source's scale. */
  readonly scale: number;
}

export function noMotion(keypoints: number): Motion {
  return { rotation: IDENTITY, exp: new Float32Array(keypoints * 3), t: [0, 0, 0], scale: 1 };
}

/** The motion of driving frame `current` relative to the first driving frame. */
export function relativeMotion(first: KeypointInfo, current: KeypointInfo): Motion {
  return {
    rotation: multiply(rotationOf(current), transpose(rotationOf(first))),
    exp: current.exp.map((v, i) => v - (first.exp[i] ?? 0)),
    t: [current.t[0] - first.t[0], current.t[1] - first.t[1], current.t[2] - first.t[2]],
    scale: current.scale / first.scale,
  };
}

/** One motion frame of the audio-to-motion model: see layout.ts for the outputs' meaning. */
export interface AudioMotionFrame {
  readonly exp: Float32Array;
  /** Pitch, yaw, roll changes in degrees. */
  readonly pose: Vec3;
  readonly t: Vec3;
  readonly scale: number;
}

const lerp = (a: number, b: number, w: number): number => a + (b - a) * w;

/** The motion at fractional position `at` of `frames` (linear between neighbours, held at the ends). */
export function audioMotionAt(frames: readonly AudioMotionFrame[], at: number): Motion {
  const last = frames.length - 1;
  if (last < 0) throw new Error('no motion frames');
  const clamped = Math.min(Math.max(at, 0), last);
  const i = Math.floor(clamped);
  const w = clamped - i;
  const a = frames[i]!;
  const b = frames[Math.min(i + 1, last)]!;
  const mix = (x: Vec3, y: Vec3): Vec3 => [lerp(x[0], y[0], w), lerp(x[1], y[1], w), lerp(x[2], y[2], w)];
  const pose = mix(a.pose, b.pose);
  return {
    rotation: rotationMatrix(pose[0], pose[1], pose[2]),
    exp: a.exp.map((v, k) => lerp(v, b.exp[k] ?? 0, w)),
    t: mix(a.t, b.t),
    scale: lerp(a.scale, b.scale, w),
  };
}

/** The driven keypoints x_d for `motion` applied to the source (before stitching). */
export function drivenKeypoints(source: KeypointInfo, motion: Motion): Float32Array {
  const rotation = multiply(motion.rotation, rotationOf(source));
  const exp = source.exp.map((v, i) => v + (motion.exp[i] ?? 0));
  const t: Vec3 = [source.t[0] + motion.t[0], source.t[1] + motion.t[1], 0];
  return placeKeypoints(source.kp, rotation, exp, source.scale * motion.scale, t);
}
