import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  buildTinyDiffusion,
  buildTinyLlama,
  buildTinyPortrait,
  DEV_MODEL_MARKER,
} from '@switchboard/models-dev';
import { DEV_MODEL_KEY, scanRepository } from './repository.js';

const root = await mkdtemp(join(tmpdir(), 'models-repo-'));
after(() => rm(root, { recursive: true, force: true }));

async function folder(path: string, files: Record<string, string>): Promise<void> {
  await mkdir(path, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(path, name), text);
}

test('the dev marker this lib reads is the one models-dev writes', () => {
  assert.equal(DEV_MODEL_KEY, DEV_MODEL_MARKER);
});

test('a folder with config.json or model_index.json is a model; others are ignored', async () => {
  const dir = join(root, 'a');
  await buildTinyLlama(join(dir, 'llm', 'tiny'), { seed: 1 });
  await folder(join(dir, 'llm', 'another'), { 'config.json': '{}' });
  await folder(join(dir, 'llm', 'notes'), { 'README.md': 'not a model' });
  await folder(join(dir, 'diffusion', 'sd'), { 'model_index.json': '{}' });
  await buildTinyDiffusion(join(dir, 'diffusion', 'tiny-sd'), { seed: 1 });
  const scan = await scanRepository(dir, 'llm');
  assert.deepEqual(
    scan.models.map((m) => m.id),
    ['another', 'tiny'],
  );
  assert.equal(scan.defaultId, 'another', 'alphabetically first without a manifest');
  assert.match(scan.models[1]!.description, /random-weight development model/);
  assert.equal(scan.models[0]!.description, '');
  const pipelines = (await scanRepository(dir, 'diffusion')).models;
  assert.deepEqual(
    pipelines.map((m) => m.id),
    ['sd', 'tiny-sd'],
  );
  assert.match(pipelines[1]!.description, /random-weight development model/, 'read from model_index.json');
});

test('default: configured id, else the manifest, else the first; a missing id is an error', async () => {
  const dir = join(root, 'b');
  await folder(join(dir, 'llm', 'm1'), { 'config.json': '{}' });
  await folder(join(dir, 'llm', 'm2'), { 'config.json': '{}' });
  assert.equal((await scanRepository(dir, 'llm')).defaultId, 'm1');
  await writeFile(join(dir, 'llm', 'models.json'), '{"default": "m2"}');
  assert.equal((await scanRepository(dir, 'llm')).defaultId, 'm2');
  assert.equal((await scanRepository(dir, 'llm', { defaultModel: 'm1' })).defaultId, 'm1');
  await assert.rejects(scanRepository(dir, 'llm', { defaultModel: 'nope' }), /"nope" is not a model/);
  await writeFile(join(dir, 'llm', 'models.json'), '{"default": "gone"}');
  await assert.rejects(scanRepository(dir, 'llm'), /models\.json "gone"/);
});

test('an empty or missing capability folder has no models and no default', async () => {
  const scan = await scanRepository(join(root, 'missing'), 'llm');
  assert.deepEqual(scan.models, []);
  assert.equal(scan.defaultId, undefined);
});

test('requiredFiles: a folder holding every named file is a model, config.json or not', async () => {
  const dir = join(root, 'c');
  const onnxSet = ['appearance_feature_extractor.onnx', 'motion_extractor.onnx', 'warping_spade.onnx'];
  // As published: the ONNX files and nothing else.
  await folder(join(dir, 'portrait', 'published'), Object.fromEntries(onnxSet.map((f) => [f, 'onnx'])));
  await folder(join(dir, 'portrait', 'incomplete'), { 'motion_extractor.onnx': 'onnx', 'config.json': '{}' });
  await buildTinyPortrait(join(dir, 'portrait', 'tiny'), { seed: 1 });
  const scan = await scanRepository(dir, 'portrait', { requiredFiles: onnxSet });
  assert.deepEqual(
    scan.models.map((m) => m.id),
    ['published', 'tiny'],
  );
  assert.equal(scan.models[0]!.description, '');
  assert.match(scan.models[1]!.description, /random-weight development model/, 'read from config.json');
  const byConfig = await scanRepository(dir, 'portrait');
  assert.deepEqual(
    byConfig.models.map((m) => m.id),
    ['incomplete', 'tiny'],
    'without the option, config.json decides as before',
  );
});
