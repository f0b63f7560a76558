// The adapter on real ONNX Runtime sessions over the tiny pipelines models-dev builds, with the
// Euler and the DDIM scheduler configs, and the same weights as an fp16 export: the scheduler
// comes from scheduler_config.json, the input types from the sessions, and the loop produces an
// image of the requested size.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { useLocalModels } from '@switchboard/models';
import { buildTinyDiffusion } from '@switchboard/models-dev';
import { denoise } from '../generation/denoise.js';
import type { DiffusionModel } from '../generation/diffusion-model.js';
import { loadOnnxPipeline } from './onnx-pipeline.js';

let root: string;
const models = new Map<string, DiffusionModel>();
let fp16: DiffusionModel;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-diffusion-'));
  useLocalModels(join(root, 'diffusion'));
  for (const scheduler of ['euler', 'ddim'] as const) {
    const dir = join(root, 'diffusion', scheduler);
    await buildTinyDiffusion(dir, { seed: 3, scheduler });
    models.set(
      scheduler,
      await loadOnnxPipeline({ id: scheduler, dir, description: '' }, { providers: ['cpu'], deviceId: 0 }),
    );
  }
  const fp16Dir = join(root, 'diffusion', 'fp16');
  await buildTinyDiffusion(fp16Dir, { seed: 3, dtype: 'fp16' });
  fp16 = await loadOnnxPipeline(
    { id: 'fp16', dir: fp16Dir, description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
});
after(async () => {
  for (const model of models.values()) await model.dispose();
  await fp16?.dispose();
  await rm(root, { recursive: true, force: true });
});

const request = {
  prompt: 'a small boat',
  negativePrompt: '',
  width: 64,
  height: 96,
  steps: 3,
  seed: 11n,
  guidanceScale: 7.5,
};

test('the scheduler is the one scheduler_config.json names; latent and pixel geometry from the VAE config', () => {
  assert.equal(models.get('euler')!.scheduler.className, 'EulerDiscreteScheduler');
  assert.equal(models.get('ddim')!.scheduler.className, 'DDIMScheduler');
  for (const model of models.values()) assert.deepEqual([model.latentChannels, model.vaeScaleFactor], [4, 8]);
});

test("the native size is unet/config.json's sample_size × the VAE scale factor (the tiny model's 512×512)", () => {
  for (const model of models.values()) assert.equal(model.nativePixels, 512 * 512);
});

test('prompts are encoded to [batch, 77, hidden] whatever id type the encoder declares', async () => {
  const hidden = await models.get('euler')!.encodePrompts(['', 'a small boat']);
  assert.equal(hidden.dims.length, 3);
  assert.deepEqual(hidden.dims.slice(0, 2), [2, 77]);
  assert.ok(hidden.data.every(Number.isFinite));
});

test('both schedulers produce an image of the requested size, and differ from each other', async () => {
  const images = [];
  for (const model of models.values()) {
    const image = await denoise(model, request, new AbortController().signal);
    assert.deepEqual(image.dims, [1, 3, 96, 64]);
    assert.ok(image.data.every(Number.isFinite));
    images.push(image.data);
  }
  assert.notDeepEqual(images[0], images[1]);
});

test('an fp16 export runs: float16 at the edges, dtype fp16, the image close to the fp32 one', async () => {
  assert.equal(models.get('euler')!.dtype, 'fp32');
  assert.equal(fp16.dtype, 'fp16');
  assert.deepEqual([fp16.nativeWidth, fp16.nativeHeight], [512, 512]);
  const [full, half] = await Promise.all(
    [models.get('euler')!, fp16].map((model) => denoise(model, request, new AbortController().signal)),
  );
  assert.deepEqual(half!.dims, [1, 3, 96, 64]);
  assert.ok(half!.data.every(Number.isFinite));
  let difference = 0;
  half!.data.forEach((v, i) => (difference += Math.abs(v - full!.data[i]!)));
  difference /= half!.data.length;
  // Same weights rounded to half precision: close, but not the same numbers.
  assert.ok(difference > 0 && difference < 0.02, `mean |fp16 − fp32| = ${difference}`);
});
