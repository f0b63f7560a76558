// The folder of the tiny portrait model: the published LivePortrait ONNX file names plus our
// audio2motion/ and config.json, the same bytes for the same seed (in memory and on disk), another
// seed changing only the weights and the recorded seed, a small size, and the dev marker in both
// JSON files so /models says the video is noise.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEV_MODEL_MARKER } from '../marker.js';
import { assertWritten, listFiles, withTmp } from '../testing.js';
import { buildTinyPortrait, tinyPortraitFiles } from './build.js';

const LAYOUT = [
  'appearance_feature_extractor.onnx',
  'audio2motion/config.json',
  'audio2motion/model.onnx',
  'config.json',
  'motion_extractor.onnx',
  'stitching.onnx',
  'stitching_eye.onnx',
  'stitching_lip.onnx',
  'warping_spade.onnx',
];

const parse = (bytes: Uint8Array | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from(bytes ?? []).toString()) as Record<string, unknown>;

test('the same seed gives identical bytes; another seed changes every file; the folder is small', () => {
  const a = tinyPortraitFiles({ seed: 42 });
  const b = tinyPortraitFiles({ seed: 42 });
  const c = tinyPortraitFiles({ seed: 43 });
  assert.deepEqual([...a.files.keys()].sort(), LAYOUT);
  let total = 0;
  for (const [path, bytes] of a.files) {
    assert.ok(
      Buffer.from(bytes).equals(Buffer.from(b.files.get(path) ?? [])),
      `${path} differs for one seed`,
    );
    // Every file depends on the seed: the weights, or the seed recorded in the marker.
    assert.ok(!Buffer.from(bytes).equals(Buffer.from(c.files.get(path) ?? [])), `${path} ignores the seed`);
    total += bytes.byteLength;
  }
  assert.ok(total < 4 * 1024 * 1024, `${total} bytes`);
});

test('config.json and audio2motion/config.json mark a development model and state the audio rates', () => {
  const { files, shape } = tinyPortraitFiles({ seed: 9 });
  const top = parse(files.get('config.json'));
  assert.equal(top['model_type'], 'liveportrait');
  assert.match(JSON.stringify(top[DEV_MODEL_MARKER]), /random-weight development model.*noise/);
  assert.equal((top[DEV_MODEL_MARKER] as { seed: number }).seed, 9);
  const audio = parse(files.get('audio2motion/config.json'));
  assert.deepEqual([audio['sample_rate'], audio['fps'], audio['num_kp']], [16000, 25, 21]);
  assert.equal(shape.audioSampleRate % shape.motionFps, 0, 'a whole number of samples per motion frame');
  assert.match(JSON.stringify(audio[DEV_MODEL_MARKER]), /random-weight development model/);
});

test('buildTinyPortrait writes the layout and refuses a folder that holds files', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'portrait', 'tiny-liveportrait');
    const { files } = await buildTinyPortrait(dir, { seed: 5 });
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertWritten(dir, files);
    await assert.rejects(buildTinyPortrait(dir, { seed: 5 }), /already holds files/);
  });
});
