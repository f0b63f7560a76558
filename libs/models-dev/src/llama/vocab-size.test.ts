// Real-sized vocabularies: a model built with vocabSize has exactly that many tokens in its
// config, tokenizer and logits, Transformers.js loads it and its tokenizer round-trips text; and
// the options leave the default model's bytes as they were (other tests pin its seeded outputs).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoModelForCausalLM, AutoTokenizer, env, type Tensor } from '@huggingface/transformers';
import { buildTinyLlama, tinyLlamaFiles } from './build.js';

const VOCAB = 128_256;

const root = await mkdtemp(join(tmpdir(), 'models-dev-vocab-'));
after(() => rm(root, { recursive: true, force: true }));
const built = await buildTinyLlama(join(root, 'llama3-vocab'), { seed: 1, vocabSize: VOCAB, logitScale: 4 });
env.allowRemoteModels = false;
env.localModelPath = root;

const text = (path: string): string => Buffer.from(built.files.get(path) ?? []).toString();

test('the default files are byte-identical to those the options did not exist for', () => {
  const sha256 = (bytes: Uint8Array | undefined): string =>
    createHash('sha256')
      .update(bytes ?? new Uint8Array())
      .digest('hex');
  const files = tinyLlamaFiles().files;
  const explicit = tinyLlamaFiles({ logitScale: 1 }).files;
  // Computed on the builder before vocabSize and logitScale existed.
  const expected: Record<string, string> = {
    'config.json': 'f9227d83371973170028e04b14d459521409ca8dd87f887a6f3100c2e910fc59',
    'generation_config.json': 'a9dd7c763300c1e5dcc5341ee772e2c4f35abfc11da7ec1aec986477f207f5c8',
    'tokenizer.json': 'afaae136aa4a38c67d487bfdc61086dab02d4ae3eee08ad5f807604cfd9389d8',
    'tokenizer_config.json': '3b541c7253d9d7d4127eaf3806555518dc11ed548464973ec17446d3be322912',
    'onnx/model.onnx': '1445ef6f292e7b8499b430be67c64ade71d97737b6d4a353564e017102688ad8',
  };
  for (const [path, hash] of Object.entries(expected)) {
    assert.equal(sha256(files.get(path)), hash, path);
    assert.equal(sha256(explicit.get(path)), hash, `${path} with logitScale 1`);
  }
});

test('config.json, tokenizer.json and the shape all have the exact vocabulary size', () => {
  assert.equal(built.shape.vocabSize, VOCAB);
  assert.equal((JSON.parse(text('config.json')) as { vocab_size: number }).vocab_size, VOCAB);
  const tokenizer = JSON.parse(text('tokenizer.json')) as {
    model: { vocab: Record<string, number>; merges: [string, string][] };
  };
  const ids = Object.values(tokenizer.model.vocab).sort((a, b) => a - b);
  assert.equal(ids.length, VOCAB);
  assert.deepEqual([ids[0], ids.at(-1)], [0, VOCAB - 1]);
  // Every merge makes a token of the vocabulary from two of its tokens, and a new one each time
  // beyond the learned merges (which may repeat a string).
  const made = tokenizer.model.merges.map(([a, b]) => {
    assert.ok(a in tokenizer.model.vocab && b in tokenizer.model.vocab, `${a} ${b}`);
    assert.ok(a + b in tokenizer.model.vocab, a + b);
    return a + b;
  });
  assert.equal(new Set(made).size, VOCAB - 3 - 256);
});

test('Transformers.js loads it: one forward pass gives logits of the vocabulary width', async () => {
  const tokenizer = await AutoTokenizer.from_pretrained('llama3-vocab');
  const model = await AutoModelForCausalLM.from_pretrained('llama3-vocab');
  try {
    const inputs = tokenizer('The model answers') as { input_ids: Tensor; attention_mask: Tensor };
    const { logits } = (await model(inputs)) as { logits: Tensor };
    const length = inputs.input_ids.dims[1] ?? 0;
    assert.deepEqual(logits.dims, [1, length, VOCAB]);
    // logitScale 4: logits spread like a trained model's (standard deviation about 4).
    const last = (logits.data as Float32Array).subarray((length - 1) * VOCAB);
    const mean = last.reduce((a, b) => a + b, 0) / VOCAB;
    const std = Math.sqrt(last.reduce((a, b) => a + (b - mean) ** 2, 0) / VOCAB);
    assert.ok(std > 2 && std < 8, `logits' standard deviation ${std}`);
  } finally {
    await model.dispose();
  }
});

test('text round-trips through encode and decode, using the synthetic merges', async () => {
  const tokenizer = await AutoTokenizer.from_pretrained('llama3-vocab');
  for (const sample of ['Hello world! How are you?', 'naïve café, 東京 🚀', 'zqxj vkw 12345']) {
    const ids = tokenizer.encode(sample);
    assert.equal(ids[0], 1, 'BOS first');
    assert.ok(ids.length - 1 < new TextEncoder().encode(sample).length, `merged: ${ids.join(' ')}`);
    assert.equal(tokenizer.decode(ids, { skip_special_tokens: true }), sample);
  }
  // Ids from every part of the vocabulary decode to text that encodes back to the same ids.
  const high = [VOCAB - 1, 100_000, 50_000, 300];
  const decoded = tokenizer.decode(high);
  assert.ok(decoded.length > 0);
  assert.equal(tokenizer.decode(tokenizer.encode(decoded, { add_special_tokens: false })), decoded);
});

test('a vocabulary below the learned one is refused', () => {
  assert.throws(() => tinyLlamaFiles({ vocabSize: 100 }), /below the learned vocabulary/);
});
