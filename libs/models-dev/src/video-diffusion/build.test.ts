// The folder of the tiny video pipeline: the layout the animation worker loads, the same bytes for
// the same seed (in memory and on disk), another seed changing only the weights, and the JSON
// files saying what the worker and diffusers read: parts, scheduler, CLIP processing, frames per
// pass, VAE scaling, and the development-model marker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEV_MODEL_MARKER } from '../marker.js';
import { assertWritten, listFiles, withTmp } from '../testing.js';
import { buildTinyVideoDiffusion, tinyVideoDiffusionFiles } from './build.js';

const LAYOUT = [
  'feature_extractor/preprocessor_config.json',
  'image_encoder/config.json',
  'image_encoder/model.onnx',
  'model_index.json',
  'scheduler/scheduler_config.json',
  'unet/config.json',
  'unet/model.onnx',
  'vae_decoder/config.json',
  'vae_decoder/model.onnx',
  'vae_encoder/config.json',
  'vae_encoder/model.onnx',
];
/** What a seed decides: the weights, and the seed recorded in the marker. */
const SEEDED = [
  'model_index.json',
  'image_encoder/model.onnx',
  'vae_encoder/model.onnx',
  'unet/model.onnx',
  'vae_decoder/model.onnx',
];

const parse = (bytes: Uint8Array | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from(bytes ?? []).toString()) as Record<string, unknown>;

test('the same seed gives identical bytes; another seed changes the weights only; the folder is small', () => {
  const a = tinyVideoDiffusionFiles({ seed: 42 });
  const b = tinyVideoDiffusionFiles({ seed: 42 });
  const c = tinyVideoDiffusionFiles({ seed: 43 });
  assert.deepEqual([...a.files.keys()].sort(), LAYOUT);
  const same = (x: typeof a, path: string): boolean =>
    Buffer.from(x.files.get(path) ?? []).equals(Buffer.from(a.files.get(path) ?? []));
  let total = 0;
  for (const [path, bytes] of a.files) {
    assert.ok(same(b, path), `${path} differs for the same seed`);
    assert.equal(same(c, path), !SEEDED.includes(path), path);
    total += bytes.byteLength;
  }
  assert.ok(total < 2 * 1024 * 1024, `${total} bytes`);
  assert.equal((parse(c.files.get('model_index.json'))[DEV_MODEL_MARKER] as { seed: number }).seed, 43);
});

test('model_index.json names a StableVideoDiffusionPipeline, its ONNX parts, and says its output is noise', () => {
  const index = parse(tinyVideoDiffusionFiles().files.get('model_index.json'));
  assert.equal(index['_class_name'], 'StableVideoDiffusionPipeline');
  for (const part of ['image_encoder', 'vae_encoder', 'unet', 'vae_decoder']) {
    assert.deepEqual(index[part], ['diffusers', 'OnnxRuntimeModel'], part);
  }
  assert.deepEqual(index['scheduler'], ['diffusers', 'EulerDiscreteScheduler']);
  assert.deepEqual(index['feature_extractor'], ['transformers', 'CLIPImageProcessor']);
  const note = (index[DEV_MODEL_MARKER] as { description: string }).description;
  assert.match(note, /random-weight development model/);
  assert.match(note, /noise/);
});

test("scheduler_config.json is SVD's: Karras sigmas 0.002–700, v-prediction, continuous timesteps", () => {
  const config = parse(tinyVideoDiffusionFiles().files.get('scheduler/scheduler_config.json'));
  assert.deepEqual(
    {
      _class_name: config['_class_name'],
      use_karras_sigmas: config['use_karras_sigmas'],
      prediction_type: config['prediction_type'],
      timestep_type: config['timestep_type'],
      timestep_spacing: config['timestep_spacing'],
      sigma_min: config['sigma_min'],
      sigma_max: config['sigma_max'],
    },
    {
      _class_name: 'EulerDiscreteScheduler',
      use_karras_sigmas: true,
      prediction_type: 'v_prediction',
      timestep_type: 'continuous',
      timestep_spacing: 'leading',
      sigma_min: 0.002,
      sigma_max: 700,
    },
  );
});

test('part configs: CLIP processing, frames per pass and native size, VAE scaling and ×8 block count', () => {
  const { files, shape } = tinyVideoDiffusionFiles();
  const pre = parse(files.get('feature_extractor/preprocessor_config.json'));
  assert.deepEqual(pre['crop_size'], { height: 224, width: 224 });
  assert.deepEqual(pre['image_mean'], [0.48145466, 0.4578275, 0.40821073]);
  assert.deepEqual(pre['image_std'], [0.26862954, 0.26130258, 0.27577711]);
  const unet = parse(files.get('unet/config.json'));
  assert.equal(unet['_class_name'], 'UNetSpatioTemporalConditionModel');
  assert.deepEqual([unet['num_frames'], unet['sample_size']], [8, 8], '8 frames per pass, 64×64 native');
  assert.deepEqual([unet['in_channels'], unet['out_channels'], unet['cross_attention_dim']], [8, 4, 1024]);
  assert.equal(unet['projection_class_embeddings_input_dim'], 3 * shape.additionTimeEmbedDim);
  for (const part of ['vae_encoder', 'vae_decoder']) {
    const vae = parse(files.get(`${part}/config.json`));
    assert.equal(vae['_class_name'], 'AutoencoderKLTemporalDecoder');
    assert.equal(vae['scaling_factor'], 0.18215);
    assert.equal((vae['block_out_channels'] as number[]).length, 4, '2^(4 − 1) = 8 pixels per latent cell');
  }
  const clip = parse(files.get('image_encoder/config.json'));
  assert.deepEqual(
    [clip['model_type'], clip['projection_dim'], clip['image_size']],
    ['clip_vision_model', 1024, 224],
  );
});

test('buildTinyVideoDiffusion writes the layout with the built bytes and refuses a folder that holds files', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'video-diffusion', 'tiny-svd');
    const { files } = await buildTinyVideoDiffusion(dir, { seed: 5 });
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertWritten(dir, files);
    await assert.rejects(buildTinyVideoDiffusion(dir, { seed: 5 }), /already holds files/);
  });
});
