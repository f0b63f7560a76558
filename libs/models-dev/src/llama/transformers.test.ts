// The built folder as a real model repository entry: Transformers.js loads it from local files
// only and generates greedily with its KV cache, matching a cache-free greedy loop token for token.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoModelForCausalLM, AutoTokenizer, env, Tensor } from '@huggingface/transformers';
import { InferenceSession } from 'onnxruntime-node';
import { buildTinyLlama } from './build.js';
import { greedyWithoutCache } from './testing.js';

const root = await mkdtemp(join(tmpdir(), 'models-dev-tjs-'));
after(() => rm(root, { recursive: true, force: true }));
const built = await buildTinyLlama(join(root, 'tiny-llama'), { seed: 3 });
env.allowRemoteModels = false;
env.localModelPath = root;

const NEW_TOKENS = 20;
const EOS = 2;

interface RunRecorder {
  run: (feeds: Record<string, { dims: number[] }>) => Promise<unknown>;
}

async function generate(prompt: string): Promise<{ ids: number[]; promptLength: number; calls: string[] }> {
  const tokenizer = await AutoTokenizer.from_pretrained('tiny-llama');
  const model = await AutoModelForCausalLM.from_pretrained('tiny-llama');
  // Observe (not replace) the real session's runs, to see the KV cache being fed back.
  const session = model.sessions['model'] as RunRecorder;
  const run = session.run.bind(session);
  const calls: string[] = [];
  session.run = (feeds) => {
    calls.push(`${feeds['input_ids']?.dims.join('x')}|${feeds['past_key_values.0.key']?.dims.join('x')}`);
    return run(feeds);
  };
  const inputs = tokenizer(prompt) as { input_ids: Tensor; attention_mask: Tensor };
  const out = await model.generate({
    ...inputs,
    max_new_tokens: NEW_TOKENS,
    min_new_tokens: NEW_TOKENS, // random weights may pick EOS early; the test wants exactly 20 steps
    do_sample: false,
  });
  await model.dispose();
  assert.ok(out instanceof Tensor);
  return {
    ids: (out.tolist() as bigint[][])[0]?.map(Number) ?? [],
    promptLength: inputs.input_ids.dims[1] ?? 0,
    calls,
  };
}

test('Transformers.js generates 20 greedy tokens with the KV cache, the same twice', async () => {
  const first = await generate('The model answers');
  const second = await generate('The model answers');
  assert.equal(first.ids.length, first.promptLength + NEW_TOKENS);
  assert.deepEqual(first.ids, second.ids);
  const generated = first.ids.slice(first.promptLength);
  assert.ok(new Set(generated).size > 1, `greedy output is not one token repeated: ${generated.join(' ')}`);
  // Prefill with an empty past, then one token per step with a past that grows by one each time.
  const { kvHeads, headDim } = built.shape;
  const past = (n: number): string => `1x${kvHeads}x${n}x${headDim}`;
  const p = first.promptLength;
  const expected = [
    `1x${p}|${past(0)}`,
    ...Array.from({ length: NEW_TOKENS - 1 }, (_, i) => `1x1|${past(p + i)}`),
  ];
  assert.deepEqual(first.calls, expected);
});

test('cached generation equals a greedy loop that recomputes everything each step', async () => {
  const { ids, promptLength } = await generate('Hello world! How are');
  const session = await InferenceSession.create(join(root, 'tiny-llama', 'onnx', 'model.onnx'));
  const reference = await greedyWithoutCache(session, built.shape, ids.slice(0, promptLength), NEW_TOKENS, [
    EOS,
  ]);
  assert.deepEqual(ids, reference);
});
