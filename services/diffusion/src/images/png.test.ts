import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { encodePng, toRgbBytes } from './png.js';

test('planar [−1, 1] → interleaved bytes, clamped and rounded', () => {
  // 2×1 image: red plane [-1, 1], green [0, 2 (clamped)], blue [-3 (clamped), 0.5]
  const { rgb, width, height } = toRgbBytes({
    data: Float32Array.of(-1, 1, 0, 2, -3, 0.5),
    dims: [1, 3, 1, 2],
  });
  assert.deepEqual([width, height], [2, 1]);
  assert.deepEqual([...rgb], [0, 128, 0, 255, 255, 191]);
});

test('the PNG decodes to exactly the pixels and size, and the same pixels give the same bytes', async () => {
  const data = Float32Array.from({ length: 3 * 24 * 16 }, (_, i) => Math.sin(i) * 0.9);
  const image = { data, dims: [1, 3, 24, 16] };
  const png = await encodePng(image);
  assert.deepEqual(png, await encodePng(image));
  const { data: decoded, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  assert.deepEqual([info.width, info.height, info.channels], [16, 24, 3]);
  assert.deepEqual([...decoded], [...toRgbBytes(image).rgb]);
});

test('anything but one RGB image is refused', () => {
  assert.throws(() => toRgbBytes({ data: new Float32Array(8), dims: [1, 4, 1, 2] }));
});
