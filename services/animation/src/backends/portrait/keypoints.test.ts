// LivePortrait's keypoint maths, checked against hand-worked values: the pose bins' expectation,
// the transposed Euler rotation acting on row vectors, Eqn. 2 with tz dropped, stitching's
// offsets and tx/ty.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyStitching,
  headposeDegrees,
  IDENTITY,
  multiply,
  placeKeypoints,
  rotationMatrix,
  transpose,
  type Mat3,
} from './keypoints.js';

const close = (actual: ArrayLike<number>, expected: readonly number[], eps = 1e-6): void => {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(
      Math.abs((actual[i] ?? NaN) - (expected[i] ?? NaN)) < eps,
      `[${i}] ${actual[i]} ≠ ${expected[i]}`,
    );
  }
};

test('pose bins: the softmax expectation × 3 − 97.5; uniform is frontal; one value is degrees', () => {
  assert.ok(Math.abs(headposeDegrees(new Float32Array(66))) < 1e-9, 'uniform bins → 0°');
  const peaked = new Float32Array(66);
  peaked[40] = 100;
  assert.ok(Math.abs(headposeDegrees(peaked) - 22.5) < 1e-6, 'bin 40 → 40·3 − 97.5');
  const twoBins = new Float32Array(66).fill(-100);
  twoBins[10] = 5;
  twoBins[11] = 5;
  assert.ok(Math.abs(headposeDegrees(twoBins) - (10.5 * 3 - 97.5)) < 1e-6, 'expectation, not argmax');
  assert.equal(headposeDegrees(Float32Array.of(12.5)), 12.5);
  assert.throws(() => headposeDegrees(new Float32Array(65)), /66 pose bins/);
});

test('rotations: (Rz·Ry·Rx)ᵀ acting on row vectors, orthonormal, identity at rest', () => {
  close(rotationMatrix(0, 0, 0), [...IDENTITY]);
  // Yaw 90°: Ry = [[0,0,1],[0,1,0],[−1,0,0]], transposed.
  close(rotationMatrix(0, 90, 0), [0, 0, -1, 0, 1, 0, 1, 0, 0]);
  // Pitch 90°: Rx = [[1,0,0],[0,0,−1],[0,1,0]], transposed.
  close(rotationMatrix(90, 0, 0), [1, 0, 0, 0, 0, 1, 0, -1, 0]);
  // Roll 90°: Rz = [[0,−1,0],[1,0,0],[0,0,1]], transposed.
  close(rotationMatrix(0, 0, 90), [0, 1, 0, -1, 0, 0, 0, 0, 1]);
  const r: Mat3 = rotationMatrix(12, -30, 7);
  close(multiply(r, transpose(r)), [...IDENTITY]);
  // (Rz·Ry·Rx)ᵀ = Rxᵀ·Ryᵀ·Rzᵀ: pitch first, then yaw, then roll, for row vectors.
  const composed = multiply(
    multiply(rotationMatrix(12, 0, 0), rotationMatrix(0, -30, 0)),
    rotationMatrix(0, 0, 7),
  );
  close(r, [...composed]);
});

test('placeKeypoints: s · (x_c · R + δ) + (tx, ty, 0)', () => {
  const kp = Float32Array.of(1, 2, 3, 0, 0, 1);
  const exp = Float32Array.of(0.1, 0, 0, 0, 0, 0);
  close(placeKeypoints(kp, IDENTITY, exp, 2, [0.5, -0.5, 9]), [2.7, 3.5, 6, 0.5, -0.5, 2]);
  // Yaw 90° sends +x to −z (row vector times the transposed matrix).
  close(
    placeKeypoints(Float32Array.of(1, 0, 0), rotationMatrix(0, 90, 0), new Float32Array(3), 1, [0, 0, 0]),
    [0, 0, -1],
  );
});

test('stitching: per-keypoint offsets, then tx to every x and ty to every y', () => {
  const driving = Float32Array.of(0, 0, 0, 1, 1, 1);
  const delta = Float32Array.of(0.1, 0.2, 0.3, 0, 0, 0, 1, 2);
  close(applyStitching(driving, delta), [1.1, 2.2, 0.3, 2, 3, 1]);
  assert.throws(() => applyStitching(driving, new Float32Array(6)), /expected 8/);
});
