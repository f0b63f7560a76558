// The published layout of a Stable Diffusion 1.5-family ONNX export (sd15-onnx-layout, from the
// published model files beside the checkout; every test skips, naming it, without them:
// model_index.json naming an OnnxStableDiffusionPipeline with safety_checker,
// feature_extractor and vae_encoder, the PNDMScheduler config as shipped, the CLIP tokenizer as
// vocab.json + merges.txt without tokenizer.json) loads as published and generates images through
// the gateway. Its ONNX weights are not published, so the tiny random-weight graphs of
// @switchboard/models-dev go in under the layout's names (text_encoder/, unet/, vae_decoder/
// model.onnx; a 49,408-row token embedding, so CLIP's ids fit). The main worker's MODEL_DIR holds
// the layout as shipped (PNDM, the default) and a copy whose scheduler class the worker does not
// run, which must fail to load with the class named. POST /generate-image takes no model, so each
// other scheduler class (scheduler_config.json's _class_name rewritten) and the fp16 copy get a
// worker of their own, with a gateway of their own on the same stack and object store.
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { tinyDiffusionFiles, type TinyDiffusion } from '@switchboard/models-dev';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { pngSize } from '../support/png.js';
import { startS3, type S3Server } from '../support/s3.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { needsPublishedModels } from '../support/shared-models.js';
import { sleep, startStack, type Stack } from '../support/stack.js';
import {
  sharedModelRepository,
  startWorker,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

const bucket = 'switchboard-images';
/** Model id → the scheduler class its copy's scheduler_config.json is rewritten to. */
const OTHER_SCHEDULERS = {
  'sd15-euler': 'EulerDiscreteScheduler',
  'sd15-euler-ancestral': 'EulerAncestralDiscreteScheduler',
  'sd15-ddim': 'DDIMScheduler',
  'sd15-lms': 'LMSDiscreteScheduler',
  'sd15-dpm': 'DPMSolverMultistepScheduler',
} as const;
const UNSUPPORTED = 'UniPCMultistepScheduler';
const needsModels = { skip: needsPublishedModels('diffusion', 'sd15-onnx-layout') };

let repo: TinyModelRepository;
let s3: S3Server;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;

interface ModelEntry {
  id: string;
  capability: string;
  status: string;
  default: boolean;
  development: boolean;
  dtype?: string;
  native_width?: number;
  native_height?: number;
}

async function addWeights(dir: string, pipeline: TinyDiffusion): Promise<void> {
  for (const part of ['text_encoder', 'unet', 'vae_decoder']) {
    await mkdir(join(dir, part), { recursive: true });
    await writeFile(join(dir, part, 'model.onnx'), pipeline.files.get(`${part}/model.onnx`)!);
  }
}

async function setSchedulerClass(dir: string, className: string): Promise<void> {
  const path = join(dir, 'scheduler', 'scheduler_config.json');
  const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  await writeFile(path, JSON.stringify({ ...config, _class_name: className }, null, 2));
}

const models = async (gateway: GatewayProcess = stack.gateway): Promise<ModelEntry[]> =>
  (
    (await (await fetch(`${gateway.url}/models`, { headers: bearer(key.key) })).json()) as {
      data: ModelEntry[];
    }
  ).data.filter((m) => m.capability === 'diffusion');

const fp32 = tinyDiffusionFiles({ seed: 7, vocabSize: 49408 });
const workerEnv = (modelDir: string) => ({
  MODEL_DIR: modelDir,
  ORT_INTRA_OP_THREADS: '1',
  ...s3.env(bucket),
});

before(async () => {
  if (needsModels.skip !== false) return;
  [repo, s3] = await Promise.all([
    sharedModelRepository('diffusion/sd15-onnx-layout', {
      modelId: 'sd15-pndm',
      prepare: (dir) => addWeights(dir, fp32),
    }),
    startS3(),
  ]);
  const root = join(repo.modelDir, 'diffusion');
  await cp(join(root, 'sd15-pndm'), join(root, 'sd15-unsupported'), { recursive: true });
  await setSchedulerClass(join(root, 'sd15-unsupported'), UNSUPPORTED);

  worker = await startWorker('diffusion', {
    env: { ...workerEnv(repo.modelDir), DIFFUSION_DEFAULT_MODEL: 'sd15-pndm' },
  });
  stack = await startStack({ env: { DIFFUSION_ADDR: worker.address, ...s3.env(bucket) } });
  key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
  // The default is loaded (SERVING); the other folder loads after it.
  for (let i = 0; i < 600 && (await models()).some((m) => m.status === 'loading'); i++) await sleep(250);
});
after(async () => {
  await stack?.stop();
  await worker?.stop();
  await s3?.stop();
  await repo?.remove();
});

async function generate(
  body: Record<string, unknown>,
  gateway: GatewayProcess = stack.gateway,
): Promise<{ model: string; png: Buffer }> {
  const res = await fetch(`${gateway.url}/generate-image`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ width: 64, height: 64, steps: 3, seed: 5, ...body }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const meta = (await res.json()) as { url: string; model: string; width: number; height: number };
  const file = await fetch(`${gateway.url}${meta.url}`, { headers: bearer(key.key) });
  assert.equal(file.status, 200);
  const png = Buffer.from(await file.arrayBuffer());
  assert.deepEqual(pngSize(png), { width: 64, height: 64 });
  return { model: meta.model, png };
}

const unetSteps = (model: string, from = worker) => from.metric('diffusion_unet_steps_total', { model });

/**
 * A copy of the layout as `id` (tiny weights, `pipeline`'s ONNX files, the scheduler class
 * rewritten when given) served by a worker of its own behind a gateway of its own.
 */
async function withVariant(
  id: string,
  options: { className?: string; pipeline?: TinyDiffusion },
  use: (served: { worker: WorkerProcess; gateway: GatewayProcess }) => Promise<void>,
): Promise<void> {
  const variant = await sharedModelRepository('diffusion/sd15-onnx-layout', {
    modelId: id,
    prepare: async (dir) => {
      await addWeights(dir, options.pipeline ?? fp32);
      if (options.className) await setSchedulerClass(dir, options.className);
    },
  });
  let served: WorkerProcess | undefined;
  let gateway: GatewayProcess | undefined;
  try {
    served = await startWorker('diffusion', { env: workerEnv(variant.modelDir) });
    gateway = await startGateway({ ...stack.gatewayEnv, DIFFUSION_ADDR: served.address });
    await use({ worker: served, gateway });
  } finally {
    await gateway?.stop();
    await served?.stop();
    await variant.remove();
  }
}

let pndmImage: Buffer;

test(
  'the layout as published (PNDM with skip_prk_steps, CLIP vocab.json + merges.txt) generates an image',
  needsModels,
  async () => {
    const { model, png } = await generate({ prompt: 'a photo of a cat' });
    assert.equal(model, 'sd15-pndm');
    pndmImage = png;
    // PNDM with skip_prk_steps takes its first timestep twice: 3 steps are 4 UNet calls, as in diffusers.
    assert.equal(await unetSteps('sd15-pndm'), 4);
    const again = await generate({ prompt: 'a photo of a cat' });
    assert.ok(again.png.equals(png), 'same seed, same image');
    const other = await generate({ prompt: 'a photograph of an astronaut riding a horse' });
    assert.ok(!other.png.equals(png), 'the prompt, tokenized with the CLIP vocabulary, conditions the image');
  },
);

for (const [id, className] of Object.entries(OTHER_SCHEDULERS)) {
  test(
    `${className}: the same layout with only _class_name changed generates its own image`,
    needsModels,
    async () => {
      await withVariant(id, { className }, async ({ worker: served, gateway }) => {
        const { model, png } = await generate({ prompt: 'a photo of a cat' }, gateway);
        assert.equal(model, id);
        assert.equal(await unetSteps(id, served), 3, 'one UNet call per step');
        assert.ok(!png.equals(pndmImage), 'a different scheduler gives a different image');
        // Euler ancestral draws fresh noise every step, from the request's seed.
        assert.ok(
          (await generate({ prompt: 'a photo of a cat' }, gateway)).png.equals(png),
          'same seed, same image',
        );
        const [entry] = await models(gateway);
        assert.deepEqual(
          [entry?.id, entry?.status, entry?.dtype, entry?.native_width, entry?.native_height],
          [id, 'ready', 'fp32', 512, 512],
        );
      });
    },
  );
}

test(
  'an fp16 export (float16 weights, latents, hidden states, timestep and image) generates an image',
  needsModels,
  async () => {
    const fp16 = tinyDiffusionFiles({ seed: 7, vocabSize: 49408, dtype: 'fp16' });
    await withVariant('sd15-fp16', { pipeline: fp16 }, async ({ gateway }) => {
      const { model, png } = await generate({ prompt: 'a photo of a cat' }, gateway);
      assert.equal(model, 'sd15-fp16');
      assert.ok(!png.equals(pndmImage), 'other weights (rounded to half) give another image');
      const [entry] = await models(gateway);
      assert.deepEqual([entry?.status, entry?.dtype, entry?.native_width], ['ready', 'fp16', 512]);
    });
  },
);

test(
  '/models: the layout ready with its dtype and native size; the unsupported scheduler failed, named in the log',
  needsModels,
  async () => {
    const byId = new Map((await models()).map((m) => [m.id, m]));
    assert.deepEqual(byId.get('sd15-pndm'), {
      id: 'sd15-pndm',
      capability: 'diffusion',
      status: 'ready',
      default: true,
      development: false,
      dtype: 'fp32',
      native_width: 512,
      native_height: 512,
    });
    const failed = byId.get('sd15-unsupported');
    assert.equal(failed?.status, 'failed');
    assert.equal(failed.dtype, undefined);
    assert.match(worker.output(), new RegExp(`_class_name \\W*${UNSUPPORTED}\\W+is not supported`));
  },
);
