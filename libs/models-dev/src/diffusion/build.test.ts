// The folder of the tiny pipeline: the diffusers ONNX layout, the same bytes for the same seed (in
// memory, on disk and through the CLI), another seed changing only the weights, and the JSON files
// saying what the worker and diffusers read: components, scheduler, VAE scaling, the dev marker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEV_MODEL_MARKER } from '../marker.js';
import { buildTinyDiffusion, tinyDiffusionFiles } from './build.js';
import { assertCliWrites, assertWritten, listFiles, withTmp } from '../testing.js';

const LAYOUT = [
  'model_index.json',
  'scheduler/scheduler_config.json',
  'text_encoder/config.json',
  'text_encoder/model.onnx',
  'tokenizer/merges.txt',
  'tokenizer/special_tokens_map.json',
  'tokenizer/tokenizer.json',
  'tokenizer/tokenizer_config.json',
  'tokenizer/vocab.json',
  'unet/config.json',
  'unet/model.onnx',
  'vae_decoder/config.json',
  'vae_decoder/model.onnx',
];
/** What a seed decides: the weights, and the seed recorded in the marker. */
const SEEDED = ['model_index.json', 'text_encoder/model.onnx', 'unet/model.onnx', 'vae_decoder/model.onnx'];

const parse = (bytes: Uint8Array | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from(bytes ?? []).toString()) as Record<string, unknown>;

test('the same seed gives identical bytes; another seed changes the weights only; the folder is small', () => {
  const a = tinyDiffusionFiles({ seed: 42 });
  const b = tinyDiffusionFiles({ seed: 42 });
  const c = tinyDiffusionFiles({ seed: 43 });
  assert.deepEqual([...a.files.keys()].sort(), LAYOUT);
  const same = (x: typeof a, path: string): boolean =>
    Buffer.from(x.files.get(path) ?? []).equals(Buffer.from(a.files.get(path) ?? []));
  let total = 0;
  for (const [path, bytes] of a.files) {
    assert.ok(same(b, path), `${path} differs for the same seed`);
    assert.equal(same(c, path), !SEEDED.includes(path), path);
    total += bytes.byteLength;
  }
  assert.ok(total < 1024 * 1024, `${total} bytes`);
  assert.equal((parse(c.files.get('model_index.json'))[DEV_MODEL_MARKER] as { seed: number }).seed, 43);
});

test('model_index.json names an OnnxStableDiffusionPipeline, its components, and says it is a dev model', () => {
  const index = parse(tinyDiffusionFiles().files.get('model_index.json'));
  assert.equal(index['_class_name'], 'OnnxStableDiffusionPipeline');
  assert.match(String(index['_diffusers_version']), /^\d+\.\d+\.\d+$/);
  assert.deepEqual(index['tokenizer'], ['transformers', 'CLIPTokenizer']);
  for (const part of ['text_encoder', 'unet', 'vae_decoder']) {
    assert.deepEqual(index[part], ['diffusers', 'OnnxRuntimeModel'], part);
  }
  assert.deepEqual(index['scheduler'], ['diffusers', 'EulerDiscreteScheduler']);
  assert.deepEqual(index['safety_checker'], [null, null]);
  assert.equal(index['requires_safety_checker'], false);
  assert.match(JSON.stringify(index[DEV_MODEL_MARKER]), /random-weight development model/);
});

test("scheduler_config.json: SD 1.5's schedule for Euler (default) or DDIM, leading spacing", () => {
  const read = (scheduler: 'euler' | 'ddim') => {
    const { files } = tinyDiffusionFiles({ scheduler });
    return {
      index: parse(files.get('model_index.json')),
      config: parse(files.get('scheduler/scheduler_config.json')),
    };
  };
  const schedule = {
    num_train_timesteps: 1000,
    beta_start: 0.00085,
    beta_end: 0.012,
    beta_schedule: 'scaled_linear',
    prediction_type: 'epsilon',
    timestep_spacing: 'leading',
    steps_offset: 1,
  };
  const euler = read('euler');
  assert.equal(euler.config['_class_name'], 'EulerDiscreteScheduler');
  assert.deepEqual({ ...euler.config, ...schedule }, euler.config);
  assert.equal(euler.config['use_karras_sigmas'], false);
  const ddim = read('ddim');
  assert.equal(ddim.config['_class_name'], 'DDIMScheduler');
  assert.deepEqual(ddim.index['scheduler'], ['diffusers', 'DDIMScheduler']);
  assert.deepEqual({ ...ddim.config, ...schedule }, ddim.config);
  assert.deepEqual([ddim.config['clip_sample'], ddim.config['set_alpha_to_one']], [false, false]);
});

test('component configs: VAE scaling and ×8 block count, UNet conditioning width, CLIP text model ids', () => {
  const { files, shape, ids } = tinyDiffusionFiles();
  const vae = parse(files.get('vae_decoder/config.json'));
  assert.equal(vae['scaling_factor'], 0.18215);
  assert.equal(vae['latent_channels'], 4);
  assert.equal((vae['block_out_channels'] as number[]).length, 4, '2^(4 − 1) = 8 pixels per latent cell');
  const unet = parse(files.get('unet/config.json'));
  assert.deepEqual([unet['in_channels'], unet['out_channels']], [4, 4]);
  assert.equal(unet['cross_attention_dim'], shape.textHidden);
  const text = parse(files.get('text_encoder/config.json'));
  assert.equal(text['model_type'], 'clip_text_model');
  assert.deepEqual(
    [text['vocab_size'], text['hidden_size'], text['max_position_embeddings']],
    [shape.vocabSize, 32, 77],
  );
  assert.deepEqual(
    [text['bos_token_id'], text['eos_token_id'], text['pad_token_id']],
    [ids.bos, ids.eos, ids.pad],
  );
});

test('buildTinyDiffusion writes the layout, and the CLI writes the same bytes for the same seed', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'diffusion', 'tiny-sd');
    const { files } = await buildTinyDiffusion(dir, { seed: 5 });
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertWritten(dir, files);
    await assert.rejects(buildTinyDiffusion(dir, { seed: 5 }), /already holds files/);
    await assertCliWrites('build-diffusion', 'diffusion', 5, join(tmp, 'cli-sd'), files);
  });
});
