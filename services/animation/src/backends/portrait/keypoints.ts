// LivePortrait's implicit-keypoint maths (src/utils/camera.py and live_portrait_wrapper.py of
// KwaiVGI/LivePortrait), on plain arrays. Keypoints are row vectors: a keypoint x is rotated as
// x · R, where R is the transpose of Rz(roll) · Ry(yaw) · Rx(pitch), exactly as
// get_rotation_matrix returns it, so the motion extractor's outputs mean here what they mean there.

/** A 3×3 matrix, row-major. */
export type Mat3 = Float64Array;
export type Vec3 = readonly [number, number, number];

/** What the motion extractor says about one picture, decoded (LivePortrait's kp_info). */
export interface KeypointInfo {
  /** Head pose in degrees. */
  readonly pitch: number;
  readonly yaw: number;
  readonly roll: number;
  /** Translation; only x and y move keypoints. */
  readonly t: Vec3;
  /** Expression offsets, [keypoints · 3]. */
  readonly exp: Float32Array;
  readonly scale: number;
  /** Canonical keypoints, [keypoints · 3]. */
  readonly kp: Float32Array;
}

/** Bins the published motion extractor predicts per angle: 66, 3° apart, centred near 0°. */
export const POSE_BINS = 66;

/**
 * Degrees from the pose head's output: the softmax expectation over the 66 bins, × 3 − 97.5
 * (LivePortrait's headpose_pred_to_degree); a single value is already in degrees.
 */
export function headposeDegrees(prediction: Float32Array): number {
  if (prediction.length === 1) return prediction[0] ?? 0;
  if (prediction.length !== POSE_BINS)
    throw new Error(`expected ${POSE_BINS} pose bins, got ${prediction.length}`);
  let max = -Infinity;
  for (const v of prediction) max = Math.max(max, v);
  let total = 0;
  let weighted = 0;
  prediction.forEach((v, i) => {
    const e = Math.exp(v - max);
    total += e;
    weighted += e * i;
  });
  return (weighted / total) * 3 - 97.5;
}

export function multiply(a: Mat3, b: Mat3): Mat3 {
  const out = new Float64Array(9);
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) {
      out[r * 3 + c] =
        (a[r * 3] ?? 0) * (b[c] ?? 0) +
        (a[r * 3 + 1] ?? 0) * (b[3 + c] ?? 0) +
        (a[r * 3 + 2] ?? 0) * (b[6 + c] ?? 0);
    }
  }
  return out;
}

export function transpose(a: Mat3): Mat3 {
  return Float64Array.from({ length: 9 }, (_, i) => a[(i % 3) * 3 + Math.floor(i / 3)] ?? 0);
}

export const IDENTITY: Mat3 = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1);

/** The rotation for a pose in degrees, as get_rotation_matrix: (Rz · Ry · Rx)ᵀ. */
export function rotationMatrix(pitchDeg: number, yawDeg: number, rollDeg: number): Mat3 {
  const [x, y, z] = [pitchDeg, yawDeg, rollDeg].map((d) => (d / 180) * Math.PI) as [number, number, number];
  const rx = Float64Array.of(1, 0, 0, 0, Math.cos(x), -Math.sin(x), 0, Math.sin(x), Math.cos(x));
  const ry = Float64Array.of(Math.cos(y), 0, Math.sin(y), 0, 1, 0, -Math.sin(y), 0, Math.cos(y));
  const rz = Float64Array.of(Math.cos(z), -Math.sin(z), 0, Math.sin(z), Math.cos(z), 0, 0, 0, 1);
  return transpose(multiply(multiply(rz, ry), rx));
}

/** The pose rotation of `info`. */
export const rotationOf = (info: KeypointInfo): Mat3 => rotationMatrix(info.pitch, info.yaw, info.roll);

/**
 * LivePortrait's Eqn. 2: x = s · (x_c · R + δ) + t, with only t's x and y applied (tz is zeroed).
 * `kp` and `exp` are [keypoints · 3].
 */
export function placeKeypoints(
  kp: Float32Array,
  rotation: Mat3,
  exp: Float32Array,
  scale: number,
  t: Vec3,
): Float32Array {
  const out = new Float32Array(kp.length);
  for (let i = 0; i < kp.length; i += 3) {
    const [x = 0, y = 0, z = 0] = [kp[i], kp[i + 1], kp[i + 2]];
    for (let c = 0; c < 3; c++) {
      const rotated = x * (rotation[c] ?? 0) + y * (rotation[3 + c] ?? 0) + z * (rotation[6 + c] ?? 0);
      const shift = c === 0 ? t[0] : c === 1 ? t[1] : 0;
      out[i + c] = scale * (rotated + (exp[i + c] ?? 0)) + shift;
    }
  }
  return out;
}

/** The source's own keypoints x_s (transform_keypoint). */
export function sourceKeypoints(info: KeypointInfo): Float32Array {
  return placeKeypoints(info.kp, rotationOf(info), info.exp, info.scale, info.t);
}

/**
 * The stitching module's correction (live_portrait_wrapper.stitching): its output is
 * [keypoints · 3 offsets, tx, ty]; the offsets are added to every keypoint, tx/ty to x and y.
 */
export function applyStitching(driving: Float32Array, delta: Float32Array): Float32Array {
  const n = driving.length;
  if (delta.length < n + 2) throw new Error(`stitching gave ${delta.length} values, expected ${n + 2}`);
  const [tx = 0, ty = 0] = [delta[n], delta[n + 1]];
  return driving.map((v, i) => v + (delta[i] ?? 0) + (i % 3 === 0 ? tx : i % 3 === 1 ? ty : 0));
}
