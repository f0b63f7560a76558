// The back-end end to end on real parts: the tiny SVD-style pipeline built into a temporary
// MODEL_DIR, real ONNX Runtime sessions, real ffmpeg decoding a PNG made by ffmpeg itself. Few
// steps keep it fast; the frame counts still need several chained segments.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildTinyVideoDiffusion } from '@switchboard/models-dev';
import { defaultFfmpegPaths } from '../../media/run-ffmpeg.js';
import { PermanentJobError, type Backend, type JobParams } from '../backend.js';
import { createVideoDiffusionBackend } from './index.js';
import { recordingOutput, renderRequest, silentLogger } from './testing.js';

const STEPS = 3;
let root: string;
let image: string;
let backend: Backend;

const create = (modelDir: string, extra: { loadDelayMs?: number } = {}): Backend =>
  createVideoDiffusionBackend({
    modelDir,
    steps: STEPS,
    execution: { providers: ['cpu'], deviceId: 0 },
    ffmpeg: defaultFfmpegPaths,
    logger: silentLogger,
    ...extra,
  });

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'video-diffusion-'));
  await buildTinyVideoDiffusion(join(root, 'video-diffusion', 'tiny-svd'), { seed: 1 });
  image = join(root, 'still.png');
  await promisify(execFile)('ffmpeg', [
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=96x80',
    '-frames:v',
    '1',
    image,
  ]);
  backend = create(root);
  await backend.ready();
});
after(async () => {
  await backend.dispose();
  await rm(root, { recursive: true, force: true });
});

async function render(params: Partial<JobParams>, signal?: AbortSignal) {
  const { out, recorded } = recordingOutput();
  await backend.render(renderRequest(image, params, recorded, signal), out);
  return recorded;
}

test('describe(): the dev model, loading then ready, default, noted as noise; native 64×64', async () => {
  const slow = create(root, { loadDelayMs: 200 });
  try {
    assert.deepEqual(
      slow.describe().models.map((m) => m.status),
      [],
      'nothing listed before the repository scan ends',
    );
    assert.equal(slow.describe().configured, true);
    // The scan ends after a moment (longer on a busy machine); loading then lasts loadDelayMs.
    for (let waited = 0; slow.describe().models.length === 0 && waited < 5000; waited += 5) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(
      slow.describe().models.map((m) => m.status),
      ['loading'],
    );
    await slow.ready();
    const info = slow.describe();
    assert.equal(info.name, 'video-diffusion');
    assert.equal(info.configured, true);
    assert.deepEqual([info.nativeWidth, info.nativeHeight], [64, 64]);
    const [model] = info.models;
    assert.deepEqual([model?.id, model?.status, model?.isDefault], ['tiny-svd', 'ready', true]);
    assert.match(model?.description ?? '', /development model.*noise/);
  } finally {
    await slow.dispose();
  }
});

test('without a model folder: not configured, and ready() rejects', async () => {
  const empty = create(join(root, 'nothing-here'));
  assert.equal(empty.describe().configured, false);
  await assert.rejects(empty.ready(), /no model/);
  assert.equal(empty.describe().configured, false);
  await empty.dispose();
});

test('exactly round(fps × duration) frames of the native size: one pass, a partial second, many segments', async () => {
  for (const [params, frames] of [
    [{ fps: 8, duration_s: 1 }, 8], // one pass
    [{ fps: 9, duration_s: 1 }, 9], // 8 + 1 from a second, partial segment
    [{ fps: 24, duration_s: 2 }, 48], // 8 + 6 · 7 − 2: seven segments
    [{ fps: 2, duration_s: 0.5 }, 1],
    [{ fps: 10, duration_s: 1.26 }, 13], // round(12.6)
  ] as const) {
    const recorded = await render({ ...params, seed: 1 });
    assert.deepEqual(
      recorded.spec,
      { width: 64, height: 64, fps: params.fps, frames },
      JSON.stringify(params),
    );
    assert.equal(recorded.frames, frames, JSON.stringify(params));
    assert.equal(recorded.misfits, 0);
  }
});

test('absent fps and duration mean 24 fps for 4 s (96 frames)', async () => {
  const recorded = await render({ seed: 2 });
  assert.deepEqual(recorded.spec, { width: 64, height: 64, fps: 24, frames: 96 });
  assert.equal(recorded.frames, 96);
});

test('width and height are honoured; sizes off the 64 grid are refused before any frame', async () => {
  const wide = await render({ width: 128, height: 64, fps: 10, duration_s: 1, seed: 3 });
  assert.deepEqual(wide.spec, { width: 128, height: 64, fps: 10, frames: 10 });
  assert.equal(wide.frames, 10);
  assert.equal(wide.misfits, 0);
  for (const size of [{ width: 100 }, { height: 72 }, { width: 0 }]) {
    const { out, recorded } = recordingOutput();
    await assert.rejects(
      backend.render(renderRequest(image, { ...size, fps: 8, duration_s: 1 }, recorded), out),
      (error: unknown) => error instanceof PermanentJobError && error.code === 'invalid_request',
    );
    assert.equal(recorded.spec, undefined, 'no encoder opened');
  }
});

test('the same seed gives the same frames; another seed, motion bucket or no seed gives others', async () => {
  const params = { fps: 12, duration_s: 1, seed: 42 };
  const first = await render(params);
  const again = await render(params);
  assert.equal(again.hash, first.hash);
  assert.notEqual((await render({ ...params, seed: 43 })).hash, first.hash);
  assert.notEqual((await render({ ...params, motion_bucket_id: 30 })).hash, first.hash);
  const unseeded = [await render({ fps: 8, duration_s: 1 }), await render({ fps: 8, duration_s: 1 })];
  assert.notEqual(unseeded[0]?.hash, unseeded[1]?.hash);
});

test('progress rises after every step and decode chunk, up to exactly 1', async () => {
  const recorded = await render({ fps: 24, duration_s: 1, seed: 4 });
  // 24 frames = 8 + 7 + 7 + 2: four segments of 3 steps and one decode chunk each.
  assert.equal(recorded.progress.length, 4 * (STEPS + 1));
  for (let i = 1; i < recorded.progress.length; i++) {
    assert.ok(recorded.progress[i]! > recorded.progress[i - 1]!, 'strictly increasing');
  }
  assert.equal(recorded.progress.at(-1), 1);
});

test('an abort stops the render within one step, with the abort reason', async () => {
  const controller = new AbortController();
  const { out, recorded } = recordingOutput();
  const request = renderRequest(image, { fps: 24, duration_s: 2, seed: 5 }, recorded, controller.signal);
  let atAbort = -1;
  const report = (fraction: number): void => request.progress(fraction);
  const watched = {
    ...request,
    progress(fraction: number) {
      report(fraction);
      if (recorded.progress.length === 5) {
        atAbort = recorded.progress.length;
        controller.abort(new Error('job canceled'));
      }
    },
  };
  await assert.rejects(backend.render(watched, out), /job canceled/);
  assert.equal(atAbort, 5);
  assert.equal(recorded.progress.length, atAbort, 'no further step or chunk ran');
  assert.ok(recorded.frames < 48);
});
