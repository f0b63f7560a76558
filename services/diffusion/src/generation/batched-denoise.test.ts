// Batched denoising on real ONNX Runtime sessions over the tiny random-weight pipeline: a batch of
// requests with different prompts, negative prompts, seeds and guidance scales gives each image bit
// for bit as the same request gives alone (text encoder, UNet, scheduler and VAE included), with the
// Euler, Euler ancestral (fresh noise every step) and fp16 pipelines; a row whose caller aborts
// leaves between steps without changing the others; a batch whose rows all abort stops.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { useLocalModels } from '@switchboard/models';
import { buildTinyDiffusion } from '@switchboard/models-dev';
import { loadOnnxPipeline } from '../adapters/onnx-pipeline.js';
import { denoise, denoiseBatch, type BatchRow, type ImageRequest } from './denoise.js';
import type { DiffusionModel, FloatTensor } from './diffusion-model.js';

let root: string;
const models = new Map<string, DiffusionModel>();

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'switchboard-batched-denoise-'));
  useLocalModels(join(root, 'diffusion'));
  const cpu = { providers: ['cpu' as const], deviceId: 0 };
  for (const name of ['euler', 'ancestral', 'fp16'] as const) {
    const dir = join(root, 'diffusion', name);
    await buildTinyDiffusion(dir, { seed: 5, ...(name === 'fp16' ? { dtype: 'fp16' as const } : {}) });
    if (name === 'ancestral') {
      // The same schedule, sampled by Euler ancestral: it draws fresh noise at every step.
      const path = join(dir, 'scheduler', 'scheduler_config.json');
      const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
      await writeFile(path, JSON.stringify({ ...config, _class_name: 'EulerAncestralDiscreteScheduler' }));
    }
    models.set(name, await loadOnnxPipeline({ id: name, dir, description: '' }, cpu));
  }
});
after(async () => {
  for (const model of models.values()) await model.dispose();
  await rm(root, { recursive: true, force: true });
});

const shared = { width: 64, height: 96, steps: 4 };
const guided: ImageRequest[] = [
  { ...shared, prompt: 'a small boat', negativePrompt: '', seed: 11n, guidanceScale: 7.5 },
  { ...shared, prompt: 'a red bicycle in the rain', negativePrompt: 'blurry', seed: 12n, guidanceScale: 3 },
  { ...shared, prompt: 'a fox', negativePrompt: 'a dog', seed: 9_007_199_254_740_991n, guidanceScale: 1.5 },
];
const unguided = guided.map((request, i) => ({ ...request, guidanceScale: [0, 1, 0.5][i]! }));

const live = (): AbortSignal => new AbortController().signal;
const rowsOf = (requests: readonly ImageRequest[]): BatchRow[] =>
  requests.map((request) => ({ request, signal: live() }));

/** The same model, recording the batch size of every UNet call (and calling `onPredict` first). */
function recording(model: DiffusionModel, onPredict?: (call: number) => void) {
  const batches: number[] = [];
  const wrapped: DiffusionModel = {
    ...model,
    async predictNoise(latents, timestep, hidden) {
      batches.push(latents.dims[0]!);
      onPredict?.(batches.length);
      return model.predictNoise(latents, timestep, hidden);
    },
  };
  return { model: wrapped, batches };
}

const bytes = (image: FloatTensor | Error | undefined): Buffer => {
  if (image instanceof Error) throw image;
  assert.ok(image, 'expected an image');
  return Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
};

async function alone(model: DiffusionModel, requests: readonly ImageRequest[]): Promise<Buffer[]> {
  const images = [];
  for (const request of requests) images.push(bytes(await denoise(model, request, live())));
  return images;
}

for (const name of ['euler', 'ancestral', 'fp16']) {
  test(`${name}: three rows in one batch give exactly the images each gives alone`, async () => {
    const model = models.get(name)!;
    for (const requests of [guided, unguided]) {
      const expected = await alone(model, requests);
      const { model: counted, batches } = recording(model);
      const images = await denoiseBatch(counted, rowsOf(requests));
      const passes = requests[0]!.guidanceScale > 1 ? 2 : 1;
      assert.deepEqual(
        batches,
        [3, 3, 3, 3].map((rows) => rows * passes),
        'one UNet call per step',
      );
      assert.deepEqual(
        images.map((image) => (image instanceof Error ? image : image.dims)),
        requests.map(() => [1, 3, 96, 64]),
      );
      images.forEach((image, i) =>
        assert.ok(bytes(image).equals(expected[i]!), `row ${i} differs from alone`),
      );
      assert.notDeepEqual(expected[0], expected[1], 'the rows are different images');
    }
  });
}

test('a row whose caller aborts leaves between steps; the others still equal their lone images', async () => {
  for (const name of ['euler', 'ancestral']) {
    const model = models.get(name)!;
    const expected = await alone(model, guided);
    const abort = new AbortController();
    const { model: counted, batches } = recording(model, (call) => {
      if (call === 2) abort.abort();
    });
    const rows = rowsOf(guided);
    rows[1] = { ...rows[1]!, signal: abort.signal };
    const ended: number[] = [];
    const images = await denoiseBatch(counted, rows, { onRowEnd: (row) => ended.push(row) });
    assert.deepEqual(batches, [6, 6, 4, 4], `${name}: the aborted row left after its second step`);
    assert.ok(
      images[1] instanceof Error && images[1].name === 'AbortError',
      `${name}: answered with the abort`,
    );
    assert.ok(bytes(images[0]).equals(expected[0]!), `${name}: row 0`);
    assert.ok(bytes(images[2]).equals(expected[2]!), `${name}: row 2`);
    assert.deepEqual(ended, [1, 0, 2], 'every row ends once');
  }
});

test('when every row has aborted the batch stops before the next UNet call', async () => {
  const abort = new AbortController();
  const { model, batches } = recording(models.get('euler')!, (call) => {
    if (call === 1) abort.abort();
  });
  const rows = guided.map((request) => ({ request, signal: abort.signal }));
  const images = await denoiseBatch(model, rows);
  assert.deepEqual(batches, [6]);
  assert.ok(images.every((image) => image instanceof Error && image.name === 'AbortError'));
  assert.equal(images.length, 3);
});

test('rows that do not share a pass are refused', async () => {
  await assert.rejects(
    denoiseBatch(models.get('euler')!, rowsOf([guided[0]!, { ...guided[1]!, steps: 5 }])),
    /share one pass/,
  );
  await assert.rejects(
    denoiseBatch(models.get('euler')!, rowsOf([guided[0]!, unguided[1]!])),
    /share one pass/,
  );
});
