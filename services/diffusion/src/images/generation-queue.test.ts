// The batch key: requests share a batch only when one UNet pass can serve them all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ImageRequest } from '../generation/denoise.js';
import type { DiffusionModel } from '../generation/diffusion-model.js';
import { generationBatchKey, type GenerationJob } from './generation-queue.js';
import { ImagePhases } from './image-phases.js';

const image: ImageRequest = {
  prompt: 'a cat',
  negativePrompt: '',
  width: 512,
  height: 512,
  steps: 20,
  seed: 1n,
  guidanceScale: 7.5,
};
// The key never looks at the pipeline itself, only at the model id.
const job = (change: Partial<ImageRequest> = {}, modelId = 'sd15'): GenerationJob => ({
  modelId,
  model: {} as DiffusionModel,
  image: { ...image, ...change },
  phases: new ImagePhases({}),
});

test('prompts, negative prompts, seeds and guidance scales (above 1) may differ within a batch', () => {
  const key = generationBatchKey(job());
  for (const change of [
    { prompt: 'a dog' },
    { negativePrompt: 'blur' },
    { seed: 99n },
    { guidanceScale: 1.01 },
    { guidanceScale: 30 },
  ]) {
    assert.equal(
      generationBatchKey(job(change)),
      key,
      JSON.stringify(change, (_, v: unknown) => String(v)),
    );
  }
  assert.equal(generationBatchKey(job({ guidanceScale: 0 })), generationBatchKey(job({ guidanceScale: 1 })));
});

test('model, width, height, steps and guidance on/off must match', () => {
  const key = generationBatchKey(job());
  for (const other of [
    job({}, 'sd21'),
    job({ width: 768 }),
    job({ height: 768 }),
    job({ width: 256, height: 1024 }),
    job({ steps: 21 }),
    job({ guidanceScale: 1 }),
  ]) {
    assert.notEqual(generationBatchKey(other), key);
  }
});
