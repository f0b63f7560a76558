// Reproducibility and the folder layout: the same seed gives the same bytes in every file (in
// memory, on disk and through the CLI); another seed changes the weights and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { buildTinyLlama, tinyLlamaFiles } from './build.js';
import { DEV_MODEL_MARKER } from './config.js';
import { assertCliUsage, assertCliWrites, assertWritten, listFiles, withTmp } from '../testing.js';

const LAYOUT = [
  'config.json',
  'generation_config.json',
  'onnx/model.onnx',
  'tokenizer.json',
  'tokenizer_config.json',
];

test('the same seed gives identical bytes for every file; files are small', () => {
  const a = tinyLlamaFiles({ seed: 42 });
  const b = tinyLlamaFiles({ seed: 42 });
  assert.deepEqual([...a.files.keys()].sort(), LAYOUT);
  for (const [path, bytes] of a.files) {
    assert.ok(Buffer.from(bytes).equals(Buffer.from(b.files.get(path) ?? [])), `${path} differs`);
    assert.ok(bytes.byteLength < 4 * 1024 * 1024, `${path} is ${bytes.byteLength} bytes`);
  }
});

test('a different seed changes the weights and the recorded seed, not the tokenizer', async () => {
  const a = tinyLlamaFiles({ seed: 1 });
  const b = tinyLlamaFiles({ seed: 2 });
  const same = (path: string): boolean =>
    Buffer.from(a.files.get(path) ?? []).equals(Buffer.from(b.files.get(path) ?? []));
  assert.ok(!same('onnx/model.onnx'));
  assert.ok(same('tokenizer.json') && same('tokenizer_config.json') && same('generation_config.json'));
  const config = JSON.parse(Buffer.from(b.files.get('config.json') ?? []).toString()) as Record<
    string,
    unknown
  >;
  assert.deepEqual((config[DEV_MODEL_MARKER] as { seed: number }).seed, 2);
  // Same architecture, different numbers: both load and their logits differ.
  const run = async (model: Uint8Array | undefined): Promise<Float32Array> => {
    const session = await InferenceSession.create(model ?? new Uint8Array());
    const { Tensor } = await import('onnxruntime-node');
    const ids = new Tensor('int64', BigInt64Array.from([1n, 50n]), [1, 2]);
    const feeds: Record<string, InstanceType<typeof Tensor>> = {
      input_ids: ids,
      attention_mask: new Tensor('int64', BigInt64Array.from([1n, 1n]), [1, 2]),
      position_ids: new Tensor('int64', BigInt64Array.from([0n, 1n]), [1, 2]),
    };
    for (const name of session.inputNames.filter((n) => n.startsWith('past_key_values.'))) {
      feeds[name] = new Tensor('float32', new Float32Array(0), [1, a.shape.kvHeads, 0, a.shape.headDim]);
    }
    return (await session.run(feeds))['logits']?.data as Float32Array;
  };
  assert.notDeepEqual(await run(a.files.get('onnx/model.onnx')), await run(b.files.get('onnx/model.onnx')));
});

test('config.json describes the model to Transformers.js and says it is a development model', () => {
  const { files, shape } = tinyLlamaFiles({ seed: 0 });
  const config = JSON.parse(Buffer.from(files.get('config.json') ?? []).toString()) as Record<
    string,
    unknown
  >;
  assert.equal(config['model_type'], 'llama');
  assert.deepEqual(config['architectures'], ['LlamaForCausalLM']);
  assert.equal(config['num_hidden_layers'], 2);
  assert.equal(config['hidden_size'], 32);
  assert.equal(config['num_attention_heads'], 4);
  assert.equal(config['num_key_value_heads'], 2);
  assert.equal(config['head_dim'], 8);
  assert.equal(config['vocab_size'], shape.vocabSize);
  assert.equal(config['max_position_embeddings'], 2048);
  assert.equal(config['tie_word_embeddings'], false);
  assert.deepEqual([config['bos_token_id'], config['eos_token_id'], config['pad_token_id']], [1, 2, 0]);
  assert.match(JSON.stringify(config[DEV_MODEL_MARKER]), /random-weight/);
});

test('buildTinyLlama writes the layout; it refuses a folder that already holds files', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'llm', 'tiny-llama');
    const { files } = await buildTinyLlama(dir, { seed: 5 });
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertWritten(dir, files);
    await assert.rejects(buildTinyLlama(dir, { seed: 5 }), /already holds files/);
    assert.deepEqual(await readdir(join(tmp, 'llm')), ['tiny-llama'], 'no partial folder is left behind');

    const empty = join(tmp, 'empty');
    await mkdir(empty);
    await buildTinyLlama(empty, { seed: 5 });
    assert.deepEqual(await listFiles(empty), LAYOUT);
    const busy = join(tmp, 'busy');
    await mkdir(busy);
    await writeFile(join(busy, 'keep.txt'), 'x');
    await assert.rejects(buildTinyLlama(busy), /already holds files/);
    assert.deepEqual(await readdir(busy), ['keep.txt']);
  });
});

test('the CLI writes the same bytes as the library for the same seed', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'cli-model');
    await assertCliWrites('build-llm', 'llama', 9, dir, tinyLlamaFiles({ seed: 9 }).files);
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertCliUsage('build-llm');
  });
});
