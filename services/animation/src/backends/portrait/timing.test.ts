// The timing rules for portrait: fps from the request, else the driver, else 25; the driver's
// length cut at duration_s; round(fps × length) frames, never none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clipTiming, DEFAULT_FPS } from './timing.js';

test('fps: the request, else the driving video, else 25', () => {
  assert.equal(clipTiming({ fps: 12, driverFps: 30, driverSeconds: 2 }).fps, 12);
  assert.equal(clipTiming({ driverFps: 30, driverSeconds: 2 }).fps, 30);
  assert.equal(clipTiming({ driverSeconds: 2 }).fps, DEFAULT_FPS);
  assert.equal(DEFAULT_FPS, 25);
});

test("length: the driver's, cut at duration_s, never stretched by it", () => {
  assert.deepEqual(clipTiming({ driverFps: 10, driverSeconds: 1.2 }), { fps: 10, seconds: 1.2, frames: 12 });
  assert.deepEqual(clipTiming({ durationS: 0.5, driverFps: 10, driverSeconds: 1.2 }), {
    fps: 10,
    seconds: 0.5,
    frames: 5,
  });
  assert.equal(clipTiming({ durationS: 60, driverFps: 10, driverSeconds: 1.2 }).frames, 12);
});

test('frames: round(fps × length), at least one', () => {
  assert.equal(clipTiming({ fps: 5, durationS: 0.5, driverSeconds: 0.75 }).frames, 3, '2.5 rounds up');
  assert.equal(clipTiming({ fps: 29.97, driverSeconds: 1 }).frames, 30);
  assert.equal(clipTiming({ fps: 1, driverSeconds: 0.1 }).frames, 1);
});
