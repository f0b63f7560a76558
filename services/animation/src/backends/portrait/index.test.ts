// The portrait back-end end to end on real parts: the tiny LivePortrait-layout model built into a
// temporary MODEL_DIR, ONNX Runtime on the CPU, real ffmpeg for every fixture and every decode.
// Exact frame counts and clip specs for both drivers, the API's timing rules, the driving
// sound carried into the MP4, determinism, cancellation between frames, refused inputs.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { buildTinyPortrait } from '@switchboard/models-dev';
import { createLogger } from '@switchboard/telemetry';
import { PermanentJobError, type Backend } from '../backend.js';
import { defaultFfmpegPaths } from '../../media/run-ffmpeg.js';
import { createPortraitBackend } from './index.js';
import { makeFixtures, recorder, renderRequest, type Fixtures } from './testing.js';

const root = await mkdtemp(join(tmpdir(), 'portrait-backend-'));
let media: Fixtures;
let backend: Backend;

const create = (modelDir: string) =>
  createPortraitBackend({
    modelDir,
    execution: { providers: ['cpu'], deviceId: 0 },
    ffmpeg: defaultFfmpegPaths,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });

before(async () => {
  const mediaDir = join(root, 'media');
  await mkdir(mediaDir);
  const [fixtures] = await Promise.all([
    makeFixtures(mediaDir),
    buildTinyPortrait(join(root, 'models', 'portrait', 'tiny-liveportrait'), { seed: 7 }),
  ]);
  media = fixtures;
  backend = create(join(root, 'models'));
  await backend.ready();
});

after(async () => {
  await backend.dispose();
  await rm(root, { recursive: true, force: true });
});

const permanent = (code: string) => (error: unknown) =>
  error instanceof PermanentJobError && error.code === code;

test('describe: configured with the dev model, ready and default; an empty MODEL_DIR is not configured', async () => {
  const info = backend.describe();
  assert.equal(info.name, 'portrait');
  assert.equal(info.configured, true);
  assert.equal(info.models.length, 1);
  const [model] = info.models;
  assert.deepEqual([model?.id, model?.status, model?.isDefault], ['tiny-liveportrait', 'ready', true]);
  assert.match(model?.description ?? '', /development model.*noise/);

  const empty = create(join(root, 'no-models'));
  assert.deepEqual(empty.describe(), { name: 'portrait', configured: false, models: [] });
  await assert.rejects(empty.ready(), /no model/);
  await empty.dispose();
});

test('driving video: its rate and length, its sound in the MP4, 512×512 frames; the same job twice is the same clip', async () => {
  const first = recorder();
  await backend.render(
    renderRequest({ image: media.image, drivingVideo: media.video }, {}, first),
    first.out,
  );
  assert.deepEqual(first.specs, [{ width: 512, height: 512, fps: 10, frames: 12, audio: media.video }]);
  assert.equal(first.frames.length, 12);
  assert.ok(new Set(first.frames).size > 1, 'the driving motion changes the picture');
  assert.equal(first.progress.length, 12);
  assert.equal(first.progress.at(-1), 1);

  const again = recorder();
  await backend.render(
    renderRequest({ image: media.image, drivingVideo: media.video }, {}, again),
    again.out,
  );
  assert.deepEqual(again.frames, first.frames, 'deterministic');
});

test('driving video without sound: fps and duration_s from the request cut the clip; no audio track', async () => {
  const rec = recorder();
  const request = renderRequest(
    { image: media.image, drivingVideo: media.silentVideo },
    { fps: 5, duration_s: 0.5 },
    rec,
  );
  await backend.render(request, rec.out);
  assert.deepEqual(rec.specs, [{ width: 512, height: 512, fps: 5, frames: 3, audio: undefined }]);
  assert.equal(rec.frames.length, 3);
});

test('audio: 25 fps by default, its length, the audio muxed; fps and duration_s apply', async () => {
  const rec = recorder();
  await backend.render(renderRequest({ image: media.image, audio: media.wav }, {}, rec), rec.out);
  assert.deepEqual(rec.specs, [{ width: 512, height: 512, fps: 25, frames: 20, audio: media.wav }]);
  assert.equal(rec.frames.length, 20);
  assert.ok(new Set(rec.frames).size > 1, 'speech moves the face');

  const cut = recorder();
  await backend.render(
    renderRequest({ image: media.image, audio: media.wav }, { fps: 10, duration_s: 0.4 }, cut),
    cut.out,
  );
  assert.deepEqual(cut.specs, [{ width: 512, height: 512, fps: 10, frames: 4, audio: media.wav }]);
  assert.equal(cut.frames.length, 4);
  assert.equal(cut.frames[0], rec.frames[0], 'the same source and motion at t = 0 give the same frame');
});

test('cancellation is seen between frames: nothing is written after the abort', async () => {
  const controller = new AbortController();
  const rec = recorder((count) => {
    if (count === 2) controller.abort(new Error('job canceled'));
  });
  const request = renderRequest(
    { image: media.image, drivingVideo: media.video },
    {},
    rec,
    controller.signal,
  );
  await assert.rejects(backend.render(request, rec.out), /job canceled/);
  assert.equal(rec.frames.length, 2);
});

test('refused inputs: no driver, both drivers, undecodable audio or video', async () => {
  const rec = recorder();
  const render = (inputs: Parameters<typeof renderRequest>[0]) =>
    backend.render(renderRequest(inputs, {}, rec), rec.out);
  await assert.rejects(render({ image: media.image }), permanent('invalid_request'));
  await assert.rejects(
    render({ image: media.image, drivingVideo: media.video, audio: media.wav }),
    permanent('invalid_request'),
  );
  await assert.rejects(render({ image: media.image, audio: media.garbage }), permanent('invalid_audio'));
  await assert.rejects(render({ image: media.image, audio: media.silentVideo }), permanent('invalid_audio'));
  await assert.rejects(
    render({ image: media.image, drivingVideo: media.garbage }),
    permanent('invalid_request'),
  );
  await assert.rejects(render({ image: media.image, drivingVideo: media.wav }), permanent('invalid_request'));
  assert.equal(rec.specs.length, 0, 'refused before any frame');
});
