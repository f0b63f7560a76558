// POST /generate-image and GET /api/images/{id}.png through the real gateway to a real diffusion
// worker process running the tiny random-weight pipeline on ONNX Runtime, with the PNGs in a real
// S3-protocol server (s3rver) shared by worker and gateway (`POST /generate-image`).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { pngSize } from '../support/png.js';
import { startS3, type S3Server } from '../support/s3.js';
import {
  errorOf,
  type ModelStack,
  sleep,
  type Stack,
  startModelStack,
  startWorkerWithGateway,
} from '../support/stack.js';
import type { TinyModelRepository, WorkerProcess } from '../support/worker.js';

const bucket = 'switchboard-images';
let s3: S3Server;
let diffusion: ModelStack;
let repo: TinyModelRepository;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;
let other: CreatedKey;

before(async () => {
  s3 = await startS3();
  diffusion = await startModelStack('diffusion', {
    workerEnv: { DIFFUSION_QUEUE_DEPTH: '8' },
    sharedEnv: s3.env(bucket),
  });
  ({ repo, worker, stack } = diffusion);
  [key, other] = await Promise.all([
    createKey(stack.gateway, { rate_limit_per_minute: 10_000 }),
    createKey(stack.gateway, { rate_limit_per_minute: 10_000 }),
  ]);
});
after(async () => {
  await diffusion?.stop();
  await s3?.stop();
});

interface GeneratedImage {
  id: string;
  url: string;
  width: number;
  height: number;
  steps: number;
  seed: number;
  model: string;
  created: number;
}

const generate = (body: unknown, signal?: AbortSignal) =>
  fetch(`${stack.gateway.url}/generate-image`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

async function image(body: Record<string, unknown>): Promise<{ meta: GeneratedImage; png: Buffer }> {
  const res = await generate(body);
  assert.equal(res.status, 200, await res.clone().text());
  const meta = (await res.json()) as GeneratedImage;
  const file = await fetch(`${stack.gateway.url}${meta.url}`, { headers: bearer(key.key) });
  assert.equal(file.status, 200);
  assert.equal(file.headers.get('content-type'), 'image/png');
  return { meta, png: Buffer.from(await file.arrayBuffer()) };
}

test('defaults: 1024×1024, 20 steps, a random seed reported; the PNG is exactly that size', async () => {
  const before = await worker.metric('diffusion_unet_steps_total');
  const { meta, png } = await image({ prompt: 'a lighthouse at dusk' });
  assert.match(meta.id, /^img-[0-9a-f-]{36}$/);
  assert.equal(meta.url, `/api/images/${meta.id}.png`);
  assert.deepEqual([meta.width, meta.height, meta.steps], [1024, 1024, 20]);
  assert.ok(Number.isSafeInteger(meta.seed) && meta.seed >= 0);
  assert.equal(meta.model, repo.modelId);
  assert.ok(Math.abs(meta.created - Date.now() / 1000) < 120);
  assert.deepEqual(pngSize(png), { width: 1024, height: 1024 });
  assert.equal((await worker.metric('diffusion_unet_steps_total')) - before, 20, 'steps honoured exactly');
});

test('explicit sizes give PNGs of exactly that size', async () => {
  for (const [width, height] of [
    [64, 64],
    [128, 64],
    [64, 200],
  ] as const) {
    const { meta, png } = await image({ prompt: 'a fox', width, height, steps: 2, seed: 1 });
    assert.deepEqual([meta.width, meta.height], [width, height]);
    assert.deepEqual(pngSize(png), { width, height });
  }
});

test('same seed and parameters → byte-identical PNG; another seed, prompt or guidance → different', async () => {
  const body = {
    prompt: 'a red bicycle',
    width: 128,
    height: 128,
    steps: 4,
    seed: 1234,
    guidance_scale: 7.5,
  };
  const a = await image(body);
  const b = await image(body);
  assert.equal(a.meta.seed, 1234);
  assert.notEqual(a.meta.id, b.meta.id);
  assert.ok(a.png.equals(b.png), 'same seed, same bytes');
  for (const change of [
    { seed: 1235 },
    { prompt: 'a blue bicycle' },
    { guidance_scale: 0 },
    { negative_prompt: 'rain' },
  ]) {
    const c = await image({ ...body, ...change });
    assert.ok(!a.png.equals(c.png), `${JSON.stringify(change)} changes the image`);
  }
});

test('validation: 400 naming the field', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'prompt'],
    [{ prompt: '' }, 'prompt'],
    [{ prompt: 7 }, 'prompt'],
    [{ prompt: 'x', width: 100 }, 'width'],
    [{ prompt: 'x', width: 56 }, 'width'],
    [{ prompt: 'x', height: 2056 }, 'height'],
    [{ prompt: 'x', height: '512' }, 'height'],
    [{ prompt: 'x', steps: 0 }, 'steps'],
    [{ prompt: 'x', steps: 101 }, 'steps'],
    [{ prompt: 'x', steps: 2.5 }, 'steps'],
    [{ prompt: 'x', guidance_scale: 31 }, 'guidance_scale'],
    [{ prompt: 'x', guidance_scale: -1 }, 'guidance_scale'],
    [{ prompt: 'x', seed: -1 }, 'seed'],
    [{ prompt: 'x', seed: 1.5 }, 'seed'],
    [{ prompt: 'x', negative_prompt: 3 }, 'negative_prompt'],
  ];
  for (const [body, param] of cases) {
    const res = await generate(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    const error = await errorOf(res);
    assert.deepEqual([error.code, error.param], ['invalid_request', param], JSON.stringify(body));
  }
});

test('the image belongs to its key: another key and malformed ids get 404', async () => {
  const { meta } = await image({ prompt: 'a secret', width: 64, height: 64, steps: 1, seed: 3 });
  const stolen = await fetch(`${stack.gateway.url}${meta.url}`, { headers: bearer(other.key) });
  assert.equal(stolen.status, 404);
  assert.equal((await errorOf(stolen)).code, 'not_found');
  for (const path of [
    '/api/images/img-..%2F..%2Fetc.png',
    '/api/images/nope.png',
    `/api/images/${meta.id}.jpg`,
  ]) {
    assert.equal(
      (await fetch(`${stack.gateway.url}${path}`, { headers: bearer(key.key) })).status,
      404,
      path,
    );
  }
});

test('a client that disconnects stops the denoising loop', async () => {
  const abort = new AbortController();
  const steps = () => worker.metric('diffusion_unet_steps_total');
  const before = await steps();
  const pending = generate(
    { prompt: 'a long one', width: 512, height: 512, steps: 100, seed: 9 },
    abort.signal,
  ).catch((error: unknown) => error);
  for (let i = 0; i < 200 && (await steps()) - before < 2; i++) await sleep(20);
  abort.abort();
  assert.ok((await pending) instanceof Error);
  let cancelled = 0;
  for (let i = 0; i < 100 && cancelled === 0; i++) {
    cancelled = await worker.metric('diffusion_images_total', { outcome: 'cancelled' });
    if (cancelled === 0) await sleep(50);
  }
  assert.equal(cancelled, 1);
  const ran = (await steps()) - before;
  await sleep(500);
  assert.equal((await steps()) - before, ran, 'no step runs after the cancel');
  assert.ok(ran < 100, `stopped after ${ran} of 100 steps`);
  assert.equal(await worker.metric('diffusion_active_generations'), 0);
});

test('while the pipeline loads: 503 model_loading with Retry-After; /models says loading', async () => {
  const loading = await startWorkerWithGateway(
    'diffusion',
    stack,
    {
      MODEL_DIR: repo.modelDir,
      DIFFUSION_LOAD_DELAY_MS: '60000',
      DIFFUSION_LOADING_RETRY_AFTER_SECONDS: '4',
      ...s3.env(bucket),
    },
    { waitServing: false },
  );
  const { gateway } = loading;
  try {
    const res = await fetch(`${gateway.url}/generate-image`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x' }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '4');
    assert.equal((await errorOf(res)).code, 'model_loading');
    const models = (await (await fetch(`${gateway.url}/models`, { headers: bearer(key.key) })).json()) as {
      data: { capability: string; status: string; id: string }[];
    };
    assert.deepEqual(
      models.data.filter((m) => m.capability === 'diffusion').map((m) => [m.id, m.status]),
      [[repo.modelId, 'loading']],
    );
  } finally {
    await loading.stop();
  }
});

test('a full queue → 503 no_capacity with Retry-After; the admitted image still completes', async () => {
  const busy = await startWorkerWithGateway('diffusion', stack, {
    MODEL_DIR: repo.modelDir,
    DIFFUSION_CONCURRENCY: '1',
    DIFFUSION_QUEUE_DEPTH: '0',
    ...s3.env(bucket),
  });
  try {
    const post = (steps: number) =>
      fetch(`${busy.gateway.url}/generate-image`, {
        method: 'POST',
        headers: { ...bearer(key.key), 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'busy', width: 1024, height: 1024, steps, seed: 5 }),
      });
    const running = post(60);
    // Sequenced by the worker's own gauge, so the overflow certainly meets a busy worker.
    for (let i = 0; i < 200 && (await busy.worker.metric('diffusion_active_generations')) < 1; i++)
      await sleep(10);
    const refused = await post(1);
    assert.equal(refused.status, 503);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal((await errorOf(refused)).code, 'no_capacity');
    assert.equal((await running).status, 200);
  } finally {
    await busy.stop();
  }
});
