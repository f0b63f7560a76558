// The worker's own check of a GenerateImage request, as far as the pixel budget goes: it applies
// after the per-side limits, and within it the request is completed as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GenerateImageRequest__Output } from '@switchboard/contracts';
import { toImageRequest } from './request.js';

const request = (width: number, height: number): GenerateImageRequest__Output => ({
  prompt: 'a harbour',
  negative_prompt: '',
  width,
  height,
  steps: 2,
  seed: '5',
  model: '',
});
const defaults = { guidanceScale: 7.5, sideMultiple: 8, maxPixels: 512 * 512 };

test('a size within the budget is accepted as asked', () => {
  const image = toImageRequest(request(1024, 256), defaults);
  assert.deepEqual([image.width, image.height, image.seed], [1024, 256, 5n]);
});

test('a size over the budget is invalid_request naming the longer side', () => {
  assert.throws(() => toImageRequest(request(512, 520), defaults), {
    code: 'invalid_request',
    param: 'height',
  });
  assert.throws(() => toImageRequest(request(1024, 1024), defaults), {
    code: 'invalid_request',
    param: 'width',
  });
});

test('a side out of range is reported as such, not as over the budget', () => {
  assert.throws(() => toImageRequest(request(4096, 64), { ...defaults, maxPixels: 1 << 30 }), {
    param: 'width',
    message: /from 64 to 2048/,
  });
  assert.throws(() => toImageRequest(request(2056, 2048), defaults), { message: /from 64 to 2048/ });
});
