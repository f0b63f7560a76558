// The diffusion pixel budget through the real gateway to real diffusion worker processes running
// the tiny pipeline on ONNX Runtime (PNGs in a real S3-protocol server): width × height over the
// model's budget is 400 invalid_request naming the longer side before any step runs; a size at
// the budget still generates. The budget is derived from the model's config (4 × its native
// 512×512) unless DIFFUSION_MAX_PIXELS sets it; a setting naming no model stops start-up.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import type { GatewayProcess } from '../support/gateway.js';
import { startS3, type S3Server } from '../support/s3.js';
import {
  errorOf,
  type ModelStack,
  type Stack,
  startModelStack,
  startWorkerWithGateway,
} from '../support/stack.js';
import { startWorker, type TinyModelRepository, type WorkerProcess } from '../support/worker.js';

const bucket = 'switchboard-budget';
let s3: S3Server;
let diffusion: ModelStack;
let repo: TinyModelRepository;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  s3 = await startS3();
  diffusion = await startModelStack('diffusion', { sharedEnv: s3.env(bucket) });
  ({ repo, worker, stack } = diffusion);
  key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(async () => {
  await diffusion?.stop();
  await s3?.stop();
});

const generate = (gateway: GatewayProcess, width: number, height: number) =>
  fetch(`${gateway.url}/generate-image`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a tall ship', width, height, steps: 1, seed: 2 }),
  });

async function generates(gateway: GatewayProcess, width: number, height: number): Promise<void> {
  const res = await generate(gateway, width, height);
  assert.equal(res.status, 200, `${width}×${height}: ${await res.clone().text()}`);
  const meta = (await res.json()) as { width: number; height: number };
  assert.deepEqual([meta.width, meta.height], [width, height]);
}

async function refused(gateway: GatewayProcess, width: number, height: number, param: string) {
  const res = await generate(gateway, width, height);
  assert.equal(res.status, 400, `${width}×${height}`);
  const error = await errorOf(res);
  assert.deepEqual([error.code, error.param], ['invalid_request', param], `${width}×${height}`);
  return error.message;
}

test("by default 4 × the model's native 512×512: 1024×1024 and 2048×512 generate, more is 400", async () => {
  await generates(stack.gateway, 1024, 1024);
  await generates(stack.gateway, 2048, 512);
  const steps = await worker.metric('diffusion_unet_steps_total');
  const message = await refused(stack.gateway, 1032, 1024, 'width');
  assert.match(message, /1032×1024 is 1056768 pixels; this model allows at most 1048576 pixels/);
  await refused(stack.gateway, 1024, 1032, 'height');
  await refused(stack.gateway, 2048, 2048, 'width');
  await refused(stack.gateway, 520, 2048, 'height');
  assert.equal(await worker.metric('diffusion_unet_steps_total'), steps, 'no step ran for a refused size');
});

test('DIFFUSION_MAX_PIXELS for the model id replaces the derived budget', async () => {
  const small = await startWorkerWithGateway('diffusion', stack, {
    MODEL_DIR: repo.modelDir,
    DIFFUSION_MAX_PIXELS: JSON.stringify({ [repo.modelId]: 128 * 128 }),
    ...s3.env(bucket),
  });
  try {
    await generates(small.gateway, 128, 128);
    await generates(small.gateway, 256, 64);
    const message = await refused(small.gateway, 136, 128, 'width');
    assert.match(message, /at most 16384 pixels \(width × height\), e\.g\. 128×128/);
    await refused(small.gateway, 64, 264, 'height');
    await refused(small.gateway, 1024, 1024, 'width'); // the API's default size is over it now
  } finally {
    await small.stop();
  }
});

test('a DIFFUSION_MAX_PIXELS naming no model, or not a budget, stops the worker at start-up', async () => {
  const start = (value: string) =>
    startWorker('diffusion', {
      env: { MODEL_DIR: repo.modelDir, DIFFUSION_MAX_PIXELS: value, ...s3.env(bucket) },
    });
  await assert.rejects(
    start(JSON.stringify({ [repo.modelId]: 1 << 20, 'sd-xl': 1 << 22 })),
    /exited during start-up[\s\S]*DIFFUSION_MAX_PIXELS: "sd-xl" is not a model folder/,
  );
  await assert.rejects(
    start('1024x1024'),
    /exited during start-up[\s\S]*DIFFUSION_MAX_PIXELS: expected JSON/,
  );
  await assert.rejects(
    start('1000'),
    /exited during start-up[\s\S]*DIFFUSION_MAX_PIXELS: must be an integer/,
  );
});
