import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Tensor } from '@huggingface/transformers';
import { EndRows, rowTokens, stackFeatures } from './whisper-batch-rows.js';

const EOS = 5;
const VOCAB = 8;
const PROMPT = [1, 2, 3].map(BigInt);

/** Logits [rows, VOCAB] where every row prefers token 7, as a model that would go on would. */
function logits(rows: number): Tensor {
  return new Tensor(
    'float32',
    Float32Array.from({ length: rows * VOCAB }, (_, i) => i % VOCAB),
    [rows, VOCAB],
  );
}

const row = (out: Tensor, i: number) => Array.from((out as unknown as Tensor[])[i]!.data as Float32Array);

test('EndRows holds a finished row and an aborted row on <|endoftext|>, and leaves a running row as it is', () => {
  const aborted = new AbortController();
  aborted.abort(new Error('gone'));
  const live = new AbortController().signal;
  const end = new EndRows([live, live, aborted.signal], PROMPT.length, new Set([EOS]));
  const ids = [
    [...PROMPT, 9n, BigInt(EOS)], // ended
    [...PROMPT, 9n], // running
    [...PROMPT, 9n], // its caller left
  ];
  const out = end._call(ids, logits(3));
  const forced = Array.from({ length: VOCAB }, (_, t) => (t === EOS ? 0 : -Infinity));
  assert.deepEqual(row(out, 0), forced);
  assert.deepEqual(
    row(out, 1),
    Array.from({ length: VOCAB }, (_, t) => t),
  );
  assert.deepEqual(row(out, 2), forced);
});

test('EndRows does not count an <|endoftext|> inside the prompt as an ending', () => {
  const end = new EndRows([new AbortController().signal], 2, new Set([EOS]));
  const out = end._call([[BigInt(EOS), 1n, 9n]], logits(1));
  assert.deepEqual(
    row(out, 0),
    Array.from({ length: VOCAB }, (_, t) => t),
  );
});

test('rowTokens: prompt, tokens and the first <|endoftext|> after the prompt, as a lone call returns them', () => {
  const eos = new Set([EOS, 6]);
  assert.deepEqual(rowTokens([1n, 2n, 3n, 9n, 6n, 5n, 5n], 3, eos), [1, 2, 3, 9, 6]);
  assert.deepEqual(rowTokens([5n, 2n, 3n, 9n, 5n], 3, eos), [5, 2, 3, 9, 5]);
  // A row that reached the length limit has no ending.
  assert.deepEqual(rowTokens([1n, 2n, 3n, 9n, 9n], 3, eos), [1, 2, 3, 9, 9]);
});

test('stackFeatures puts each window in its row; windows of other shapes are refused', () => {
  const a = new Tensor('float32', Float32Array.of(1, 2, 3, 4), [1, 2, 2]);
  const b = new Tensor('float32', Float32Array.of(5, 6, 7, 8), [1, 2, 2]);
  const stacked = stackFeatures([a, b]);
  assert.deepEqual(stacked.dims, [2, 2, 2]);
  assert.deepEqual(Array.from(stacked.data as Float32Array), [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.throws(
    () => stackFeatures([a, new Tensor('float32', new Float32Array(6), [1, 2, 3])]),
    /equal features/,
  );
});
