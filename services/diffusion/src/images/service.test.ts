// An image request's spans and timings on the tiny random-weight pipeline (real ONNX Runtime):
// waiting for a batch, denoising and the VAE decode are spans of the caller's trace — also for a
// request whose batch another call's context started —, every batched UNet step reaches
// diffusion_step_seconds and every decode diffusion_vae_decode_seconds.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { GenerateImageRequest__Output } from '@switchboard/contracts';
import type { RequestContext } from '@switchboard/grpc';
import { useLocalModels, type ModelRegistry } from '@switchboard/models';
import { buildTinyDiffusion } from '@switchboard/models-dev';
import type { ObjectStore } from '@switchboard/objectstore';
import { createLogger, withSpan } from '@switchboard/telemetry';
import { captureSpans } from '@switchboard/telemetry/test-support';
import { Registry } from 'prom-client';
import { loadOnnxPipeline } from '../adapters/onnx-pipeline.js';
import type { DiffusionModel } from '../generation/diffusion-model.js';
import { createDiffusionMetrics } from '../metrics.js';
import { createGenerationQueue } from './generation-queue.js';
import { ImageService } from './service.js';

let root: string;
let model: DiffusionModel;
/** UNet calls made, each one batched step. */
let unetCalls = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'diffusion-service-'));
  useLocalModels(join(root, 'diffusion'));
  const dir = join(root, 'diffusion', 'tiny');
  await buildTinyDiffusion(dir, { seed: 5 });
  const loaded = await loadOnnxPipeline(
    { id: 'tiny', dir, description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
  model = Object.create(loaded) as DiffusionModel;
  model.predictNoise = (...args) => {
    unetCalls += 1;
    return loaded.predictNoise(...args);
  };
  model.dispose = () => loaded.dispose();
});
after(async () => {
  await model?.dispose();
  await rm(root, { recursive: true, force: true });
});

function setup() {
  const promRegistry = new Registry();
  const metrics = createDiffusionMetrics(promRegistry);
  const registry = { get: () => ({ id: 'tiny', handle: model }) } as unknown as ModelRegistry<DiffusionModel>;
  const stored: string[] = [];
  const objects = { put: async (key: string) => void stored.push(key) } as unknown as ObjectStore;
  const queue = createGenerationQueue({ concurrency: 1, depth: 8, maxBatch: 4 }, metrics);
  const service = new ImageService(registry, queue, metrics, objects, {
    defaultGuidanceScale: 7.5,
    maxPixels: { models: {} },
  });
  return { service, promRegistry, stored };
}

const request = (prompt: string): GenerateImageRequest__Output => ({
  prompt,
  negative_prompt: '',
  width: 64,
  height: 64,
  steps: 3,
  seed: '7',
  model: 'tiny',
});

const context = (): RequestContext =>
  ({
    requestId: 'test',
    keyId: 'key',
    logger: createLogger({ service: 'test', level: 'silent' }),
    signal: new AbortController().signal,
  }) as RequestContext;

async function count(promRegistry: Registry, name: string): Promise<number> {
  const values = (await promRegistry.getSingleMetric(name)!.get()).values;
  const sample = values.find((v) => (v as { metricName?: string }).metricName === `${name}_count`);
  assert.equal(sample?.labels['model'], 'tiny');
  return sample.value;
}

test('queue, denoise and VAE spans belong to each caller; steps and decodes are timed', async () => {
  const spans = captureSpans();
  const { service, promRegistry, stored } = setup();
  unetCalls = 0;
  const call = (name: string) =>
    withSpan('test', name, {}, async (span) => {
      await service.generate(request(name), context());
      return span.spanContext();
    });
  // Three at once: the first call's context starts the queue's runner, which serves the others.
  const calls = await Promise.all([call('a lighthouse'), call('a boat'), call('a gull')]);
  assert.equal(stored.length, 3);

  for (const phase of ['diffusion.queue', 'diffusion.denoise', 'diffusion.vae']) {
    const recorded = spans.named(phase);
    assert.equal(recorded.length, 3, `one ${phase} span per request`);
    for (const { spanId, traceId } of calls) {
      const own = recorded.filter((span) => span.parentSpanId === spanId);
      assert.equal(own.length, 1, `${phase} is a child of its own call`);
      assert.equal(own[0]!.traceId, traceId);
    }
  }
  const denoise = spans.named('diffusion.denoise');
  assert.ok(denoise.every((span) => span.attributes['diffusion.steps'] === 3));
  const batchSizes = denoise.map((span) => Number(span.attributes['diffusion.batch_size']));
  // Each span names the size of the batch it ran in: n spans say n for a batch of n.
  for (const size of new Set(batchSizes)) {
    assert.equal(
      batchSizes.filter((s) => s === size).length % size,
      0,
      `batch sizes ${batchSizes.join(', ')}`,
    );
  }
  assert.equal(await count(promRegistry, 'diffusion_step_seconds'), unetCalls, 'one sample per batched step');
  assert.equal(await count(promRegistry, 'diffusion_vae_decode_seconds'), 3, 'one sample per image');
});

test('a request cancelled before its image is done ends its open span as cancelled', async () => {
  const spans = captureSpans();
  const { service } = setup();
  const first = service.generate(request('a lighthouse'), context());
  const controller = new AbortController();
  const cancelled = service.generate(request('a boat at night'), { ...context(), signal: controller.signal });
  controller.abort(new Error('caller went away'));
  await Promise.allSettled([first, cancelled]);
  await assert.rejects(cancelled);
  // Whether it left while waiting or between steps of a batch it had joined, one span says so.
  const cancelledSpans = spans.spans().filter((span) => span.attributes['diffusion.cancelled'] === true);
  assert.equal(cancelledSpans.length, 1);
  assert.equal(spans.named('diffusion.vae').length, 1, 'only the first image was decoded');
});
