import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationSeconds, isSilent } from './pcm.js';

const tone = (seconds: number, amplitude: number) =>
  Float32Array.from(
    { length: seconds * 16_000 },
    (_, i) => amplitude * Math.sin((2 * Math.PI * 440 * i) / 16_000),
  );

test('duration in seconds to the millisecond at 16 kHz', () => {
  assert.equal(durationSeconds(0), 0);
  assert.equal(durationSeconds(16_000 * 45), 45);
  assert.equal(durationSeconds(12_345), 0.772);
});

test('no samples, digital silence and a −70 dBFS hum are silent; a −20 dBFS tone is not', () => {
  assert.equal(isSilent(new Float32Array(0)), true);
  assert.equal(isSilent(new Float32Array(16_000)), true);
  assert.equal(isSilent(tone(1, 10 ** (-70 / 20) * Math.SQRT2)), true);
  assert.equal(isSilent(tone(1, 10 ** (-20 / 20) * Math.SQRT2)), false);
});
