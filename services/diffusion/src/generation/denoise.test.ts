// The loop against a diffusion model made of closed-form functions, so every number is checkable:
// guidance combines the batch as documented, the scheduler is stepped once per step, the seed
// alone decides the initial latents, and an abort stops the loop before the next UNet call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSchedulerConfig } from '../scheduling/noise-schedule.js';
import { applyGuidance, denoise, initialLatents, type ImageRequest } from './denoise.js';
import type { DiffusionModel, FloatTensor } from './diffusion-model.js';

function arithmeticModel(
  calls: { batch: number; timestep: number }[],
  onPredict?: () => void,
): DiffusionModel {
  return {
    id: 'arithmetic',
    latentChannels: 4,
    vaeScaleFactor: 8,
    nativePixels: 64 * 64,
    nativeWidth: 64,
    nativeHeight: 64,
    dtype: 'fp32',
    scheduler: parseSchedulerConfig({ _class_name: 'DDIMScheduler', num_train_timesteps: 100 }),
    encodePrompts: async (prompts) => ({
      data: new Float32Array(prompts.length * 2),
      dims: [prompts.length, 1, 2],
    }),
    async predictNoise(latents: FloatTensor, timestep: number) {
      calls.push({ batch: latents.dims[0]!, timestep });
      onPredict?.();
      return latents.data.map((x) => x * 0.1);
    },
    decodeLatents: async (latents) => ({
      data: new Float32Array(3 * 64 * 64).fill(latents.data[0]!),
      dims: [1, 3, 64, 64],
    }),
    dispose: async () => {},
  };
}

const request: ImageRequest = {
  prompt: 'a cat',
  negativePrompt: '',
  width: 64,
  height: 64,
  steps: 4,
  seed: 42n,
  guidanceScale: 7.5,
};

test('guidance: uncond + scale · (cond − uncond)', () => {
  assert.deepEqual([...applyGuidance(Float32Array.of(1, 2, 3, 5), 2, 2)], [5, 8]);
});

test('one batched UNet call per step (batch 2 with guidance, 1 without), timesteps in scheduler order', async () => {
  const calls: { batch: number; timestep: number }[] = [];
  const image = await denoise(arithmeticModel(calls), request, new AbortController().signal);
  assert.deepEqual(image.dims, [1, 3, 64, 64]);
  assert.deepEqual(
    calls,
    [75, 50, 25, 0].map((timestep) => ({ batch: 2, timestep })),
  );
  calls.length = 0;
  await denoise(arithmeticModel(calls), { ...request, guidanceScale: 1 }, new AbortController().signal);
  assert.deepEqual(
    calls.map((c) => c.batch),
    [1, 1, 1, 1],
  );
});

test('initial latents: [1, 4, h/8, w/8], decided by the seed alone, scaled by the initial sigma', () => {
  const model = arithmeticModel([]);
  const a = initialLatents(model, { ...request, width: 128, height: 64 }, 1);
  assert.deepEqual(a.dims, [1, 4, 8, 16]);
  assert.deepEqual(a, initialLatents(model, { ...request, width: 128, height: 64, prompt: 'other' }, 1));
  assert.notDeepEqual(
    a.data,
    initialLatents(model, { ...request, width: 128, height: 64, seed: 43n }, 1).data,
  );
  const scaled = initialLatents(model, { ...request, width: 128, height: 64 }, 2);
  assert.ok(scaled.data.every((x, i) => Math.abs(x - 2 * a.data[i]!) < 1e-6));
});

test('an abort stops the loop before the next UNet call', async () => {
  const calls: { batch: number; timestep: number }[] = [];
  const abort = new AbortController();
  const model = arithmeticModel(calls, () => {
    if (calls.length === 2) abort.abort();
  });
  await assert.rejects(denoise(model, { ...request, steps: 10 }, abort.signal), { name: 'AbortError' });
  assert.equal(calls.length, 2);
});
