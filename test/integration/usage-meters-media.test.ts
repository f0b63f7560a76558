// The whisper and diffusion meters through the gateway, native and OpenAI-compatible: audio seconds
// are the decoded duration of the upload (a tone WAV of known length), images and megapixel-steps
// are width × height × steps / 10⁶ of each image made; refused work counts nothing. Real whisper
// and diffusion workers on their tiny development models, a real usage store.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { toneWav } from '../support/audio.js';
import { startStack, type Stack } from '../support/stack.js';
import { untilTotals, usageAroundToday } from '../support/usage.js';
import {
  startWorker,
  tinyDiffusionRepository,
  tinyWhisperRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

let objects: string;
let repos: TinyModelRepository[] = [];
let workers: WorkerProcess[] = [];
let stack: Stack;
let whisperModel: string;
let diffusionModel: string;

before(async () => {
  objects = await mkdtemp(join(tmpdir(), 'sb-usage-objects-'));
  const [whisperRepo, diffusionRepo] = await Promise.all([
    tinyWhisperRepository(),
    tinyDiffusionRepository(),
  ]);
  repos = [whisperRepo, diffusionRepo];
  whisperModel = whisperRepo.modelId;
  diffusionModel = diffusionRepo.modelId;
  const common = { ORT_INTRA_OP_THREADS: '1', OBJECT_STORE_DIR: objects };
  workers = await Promise.all([
    startWorker('whisper', { env: { ...common, MODEL_DIR: whisperRepo.modelDir } }),
    startWorker('diffusion', { env: { ...common, MODEL_DIR: diffusionRepo.modelDir } }),
  ]);
  stack = await startStack({
    env: {
      WHISPER_ADDR: workers[0]!.address,
      DIFFUSION_ADDR: workers[1]!.address,
      OBJECT_STORE_DIR: objects,
    },
  });
});
after(async () => {
  await stack?.stop();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(repos.map((r) => r.remove()));
  if (objects) await rm(objects, { recursive: true, force: true });
});

const freshKey = () => createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: null });
const usageOf = (key: CreatedKey) => () => usageAroundToday(stack.gateway, key.key);

function upload(key: CreatedKey, path: string, fields: Record<string, string>, wav: Buffer) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([wav], { type: 'audio/wav' }), 'tone.wav');
  return fetch(`${stack.gateway.url}${path}`, { method: 'POST', headers: bearer(key.key), body: form });
}

const postJson = (key: CreatedKey, path: string, body: unknown) =>
  fetch(`${stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('whisper: audio_seconds is the decoded length of each upload, requests one per call', async () => {
  const key = await freshKey();
  const native = await upload(key, '/transcribe', { format: 'json' }, toneWav(3.5));
  assert.equal(native.status, 200, await native.clone().text());
  assert.equal(((await native.json()) as { duration_s: number }).duration_s, 3.5);
  const openai = await upload(
    key,
    '/v1/audio/transcriptions',
    { model: whisperModel, response_format: 'verbose_json' },
    toneWav(2.25),
  );
  assert.equal(openai.status, 200, await openai.clone().text());
  assert.equal(((await openai.json()) as { duration: number }).duration, 2.25);
  // Not audio: refused before any work, so nothing is counted.
  const refused = await upload(key, '/transcribe', {}, Buffer.from('not audio at all'));
  assert.equal(refused.status, 400);

  await untilTotals(usageOf(key), {
    [`whisper/${whisperModel}/requests`]: 2,
    [`whisper/${whisperModel}/audio_seconds`]: 5.75,
  });
});

test('diffusion: images and megapixel_steps = Σ width × height × steps / 10⁶, native and /v1', async () => {
  const key = await freshKey();
  const native = await postJson(key, '/generate-image', {
    prompt: 'a lighthouse',
    width: 64,
    height: 128,
    steps: 3,
    seed: 1,
  });
  assert.equal(native.status, 200, await native.clone().text());
  const image = (await native.json()) as { width: number; height: number; steps: number; model: string };
  assert.deepEqual([image.width, image.height, image.steps, image.model], [64, 128, 3, diffusionModel]);

  const openai = await postJson(key, '/v1/images/generations', {
    model: diffusionModel,
    prompt: 'a harbour',
    size: '128x64',
    n: 2,
    steps: 2,
  });
  assert.equal(openai.status, 200, await openai.clone().text());
  assert.equal(((await openai.json()) as { data: unknown[] }).data.length, 2);

  // Out of range: a 400 before any work, counted nowhere.
  assert.equal((await postJson(key, '/generate-image', { prompt: 'x', width: 63 })).status, 400);

  await untilTotals(usageOf(key), {
    [`diffusion/${diffusionModel}/images`]: 3,
    [`diffusion/${diffusionModel}/megapixel_steps`]: (64 * 128 * 3 + 2 * 128 * 64 * 2) / 1e6,
  });
});
