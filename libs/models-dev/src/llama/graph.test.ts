// The tiny Llama in a real ONNX Runtime session: the documented names, shapes and symbolic
// dims, a growing KV cache, and the cache, causal mask and padding mask giving the same
// numbers as a full recomputation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceSession } from 'onnxruntime-node';
import { tinyLlamaFiles } from './build.js';
import { emptyPast, int64, lastLogits, pastFrom } from './testing.js';

const { files, shape: s } = tinyLlamaFiles({ seed: 7 });
const sessionPromise = InferenceSession.create(files.get('onnx/model.onnx') ?? new Uint8Array());
const cacheNames = (prefix: string): string[] =>
  Array.from({ length: s.layers }, (_, i) => [`${prefix}.${i}.key`, `${prefix}.${i}.value`]).flat();

function assertClose(a: Float32Array, b: Float32Array, tol = 1e-4): void {
  assert.equal(a.length, b.length);
  const worst = a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] ?? NaN))), 0);
  assert.ok(worst <= tol, `max difference ${worst}`);
}

test('inputs and outputs have the names, types and symbolic dims of an Optimum export', async () => {
  const session = await sessionPromise;
  assert.deepEqual(session.inputNames, [
    'input_ids',
    'attention_mask',
    'position_ids',
    ...cacheNames('past_key_values'),
  ]);
  assert.deepEqual(session.outputNames, ['logits', ...cacheNames('present')]);
  const meta = Object.fromEntries(
    session.inputMetadata.map((m) => [m.name, m.isTensor ? { type: m.type, shape: m.shape } : null]),
  );
  assert.deepEqual(meta['input_ids'], { type: 'int64', shape: ['batch_size', 'sequence_length'] });
  assert.deepEqual(meta['attention_mask'], { type: 'int64', shape: ['batch_size', 'total_sequence_length'] });
  assert.deepEqual(meta['position_ids'], { type: 'int64', shape: ['batch_size', 'sequence_length'] });
  for (const name of cacheNames('past_key_values')) {
    assert.deepEqual(meta[name], {
      type: 'float32',
      shape: ['batch_size', s.kvHeads, 'past_sequence_length', s.headDim],
    });
  }
  const out = Object.fromEntries(session.outputMetadata.map((m) => [m.name, m.isTensor ? m.shape : null]));
  assert.deepEqual(out['logits'], ['batch_size', 'sequence_length', s.vocabSize]);
  for (const name of cacheNames('present')) {
    assert.deepEqual(out[name], ['batch_size', s.kvHeads, 'total_sequence_length', s.headDim]);
  }
});

test('a prefill with empty past, then a step with that past: shapes grow by one, logits match a full run', async () => {
  const session = await sessionPromise;
  const prompt = [1, 40, 50, 60, 70];
  const first = await session.run({
    input_ids: int64([prompt]),
    attention_mask: int64([[1, 1, 1, 1, 1]]),
    position_ids: int64([[0, 1, 2, 3, 4]]),
    ...emptyPast(s, 1),
  });
  assert.deepEqual(first['logits']?.dims, [1, 5, s.vocabSize]);
  for (const name of cacheNames('present')) assert.deepEqual(first[name]?.dims, [1, s.kvHeads, 5, s.headDim]);
  const logits = first['logits']?.data as Float32Array;
  assert.ok(logits.every(Number.isFinite), 'logits are finite');
  assert.ok(new Set(logits).size > logits.length / 2, 'logits vary');

  const second = await session.run({
    input_ids: int64([[80]]),
    attention_mask: int64([[1, 1, 1, 1, 1, 1]]),
    position_ids: int64([[5]]),
    ...pastFrom(first),
  });
  assert.deepEqual(second['logits']?.dims, [1, 1, s.vocabSize]);
  for (const name of cacheNames('present'))
    assert.deepEqual(second[name]?.dims, [1, s.kvHeads, 6, s.headDim]);

  const full = await session.run({
    input_ids: int64([[...prompt, 80]]),
    attention_mask: int64([[1, 1, 1, 1, 1, 1]]),
    position_ids: int64([[0, 1, 2, 3, 4, 5]]),
    ...emptyPast(s, 1),
  });
  // Cached step == last position of the full run (KV cache, RoPE offsets and causal mask agree)…
  assertClose(lastLogits(second['logits']), lastLogits(full['logits']));
  // …and the prefill's last position differs from it (the new token mattered).
  assert.notDeepEqual(lastLogits(first['logits']), lastLogits(full['logits']));
});

test('a left-padded batch row gives the same logits as the same prompt alone', async () => {
  const session = await sessionPromise;
  const alone = await session.run({
    input_ids: int64([[1, 90, 91]]),
    attention_mask: int64([[1, 1, 1]]),
    position_ids: int64([[0, 1, 2]]),
    ...emptyPast(s, 1),
  });
  // Transformers.js pads on the left and sets position_ids = cumsum(mask) − 1 (1 where padded).
  const batch = await session.run({
    input_ids: int64([
      [0, 0, 1, 90, 91],
      [1, 92, 93, 94, 95],
    ]),
    attention_mask: int64([
      [0, 0, 1, 1, 1],
      [1, 1, 1, 1, 1],
    ]),
    position_ids: int64([
      [1, 1, 0, 1, 2],
      [0, 1, 2, 3, 4],
    ]),
    ...emptyPast(s, 2),
  });
  assert.deepEqual(batch['logits']?.dims, [2, 5, s.vocabSize]);
  assert.ok((batch['logits']?.data as Float32Array).every(Number.isFinite), 'padded rows stay finite');
  assertClose(lastLogits(batch['logits'], 0), lastLogits(alone['logits']));
});
