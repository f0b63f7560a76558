// The motion both drivers produce: a driving frame relative to the first one (LivePortrait's
// relative mode), the audio model's frames sampled at any time, and the driven keypoints they give.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { placeKeypoints, rotationMatrix, sourceKeypoints, type KeypointInfo } from './keypoints.js';
import { audioMotionAt, drivenKeypoints, noMotion, relativeMotion, type AudioMotionFrame } from './motion.js';

const close = (actual: ArrayLike<number>, expected: ArrayLike<number>, eps = 1e-5): void => {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(
      Math.abs((actual[i] ?? NaN) - (expected[i] ?? NaN)) < eps,
      `[${i}] ${actual[i]} ≠ ${expected[i]}`,
    );
  }
};

const info = (pose: [number, number, number], shift: number, scale: number): KeypointInfo => ({
  pitch: pose[0],
  yaw: pose[1],
  roll: pose[2],
  t: [0.1 * shift, -0.2 * shift, 3],
  exp: Float32Array.from({ length: 6 }, (_, i) => 0.01 * i * shift),
  scale,
  kp: Float32Array.of(0.3, -0.2, 0.1, -0.4, 0.5, 0.2),
});

test('no motion, or a driving frame equal to the first, leaves the source keypoints', () => {
  const source = info([5, -10, 3], 1, 1.4);
  close(drivenKeypoints(source, noMotion(2)), sourceKeypoints(source));
  const first = info([20, 4, -7], 2, 0.9);
  close(drivenKeypoints(source, relativeMotion(first, first)), sourceKeypoints(source));
});

test('relative motion: R_d,i·R_d,0ᵀ·R_s, δ_s + Δδ, s_s · ratio, t_s + Δt (tz dropped)', () => {
  const source = info([5, -10, 3], 1, 1.4);
  // The first driving frame posed like the source: the clip then takes the current frame's pose.
  const first = info([5, -10, 3], 2, 0.8);
  const current = info([15, 20, -5], 3, 1.0);
  const expected = placeKeypoints(
    source.kp,
    rotationMatrix(15, 20, -5),
    source.exp.map((v, i) => v + (current.exp[i] ?? 0) - (first.exp[i] ?? 0)),
    1.4 * (1.0 / 0.8),
    [source.t[0] + current.t[0] - first.t[0], source.t[1] + current.t[1] - first.t[1], 0],
  );
  close(drivenKeypoints(source, relativeMotion(first, current)), expected);
});

test('audio motion: linear between motion frames, held at both ends, pose in degrees', () => {
  const frame = (v: number): AudioMotionFrame => ({
    exp: Float32Array.of(v, 0, 0, 0, 0, 0),
    pose: [0, 10 * v, 0],
    t: [v, 0, 0],
    scale: 1 + v,
  });
  const frames = [frame(0), frame(1)];
  const half = audioMotionAt(frames, 0.5);
  close(half.exp, [0.5, 0, 0, 0, 0, 0]);
  close(half.t, [0.5, 0, 0]);
  assert.ok(Math.abs(half.scale - 1.5) < 1e-9);
  close(half.rotation, rotationMatrix(0, 5, 0));
  close(audioMotionAt(frames, 7).exp, frames[1]!.exp, 1e-12);
  close(audioMotionAt(frames, -1).exp, frames[0]!.exp, 1e-12);
  const source = info([0, 0, 0], 1, 1);
  close(drivenKeypoints(source, audioMotionAt([frame(0)], 0)), sourceKeypoints(source), 1e-6);
  assert.throws(() => audioMotionAt([], 0), /no motion frames/);
});
