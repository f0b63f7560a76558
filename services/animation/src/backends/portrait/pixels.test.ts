// RGB24 ↔ planar [0, 1]: exact round trip, channel planes in RGB order, clipping on the way out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planarToRgb, rgbToPlanar } from './pixels.js';

test('RGB24 to planar floats and back is exact', () => {
  const rgb = Uint8Array.from({ length: 4 * 3 * 3 }, (_, i) => (i * 37) % 256);
  const planar = rgbToPlanar(rgb, 4, 3);
  assert.equal(planar[0], Math.fround(rgb[0]! / 255), 'R plane first');
  assert.equal(planar[12], Math.fround(rgb[1]! / 255), 'then G');
  assert.equal(planar[24], Math.fround(rgb[2]! / 255), 'then B');
  assert.deepEqual(planarToRgb(planar, 4, 3), rgb);
});

test('out-of-range values clip to 0 and 255; sizes are checked', () => {
  assert.deepEqual(planarToRgb(Float32Array.of(-0.5, 1.5, 0.5), 1, 1), Uint8Array.of(0, 255, 128));
  assert.throws(() => rgbToPlanar(new Uint8Array(5), 1, 1), /expected 3 bytes/);
  assert.throws(() => planarToRgb(new Float32Array(5), 1, 1), /expected 3 values/);
});
