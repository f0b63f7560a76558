import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRandom } from '@switchboard/models';
import { argmax, sampleToken } from './sampler.js';

const logits = Float32Array.from([0.1, 2.0, 1.5, -1, 1.9, 0.0, 1.0, 0.5]);

function draws(seed: bigint, n: number, temperature: number, topP: number): number[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: n }, () => sampleToken(logits, { temperature, topP }, random));
}

test('temperature 0 is argmax and ignores the random stream', () => {
  assert.equal(argmax(logits), 1);
  assert.deepEqual(draws(1n, 5, 0, 1), [1, 1, 1, 1, 1]);
  assert.deepEqual(draws(2n, 5, 0, 0.5), [1, 1, 1, 1, 1]);
});

test('same seed → same tokens; different seeds → different tokens', () => {
  assert.deepEqual(draws(42n, 50, 0.9, 1), draws(42n, 50, 0.9, 1));
  assert.notDeepEqual(draws(42n, 50, 0.9, 1), draws(43n, 50, 0.9, 1));
  assert.deepEqual(draws(-7n, 20, 1.3, 0.8), draws(-7n, 20, 1.3, 0.8), 'negative int64 seeds work');
});

test('top_p keeps only the smallest nucleus reaching p', () => {
  // Probabilities at temperature 1: ids 1, 4, 2 hold 29%, 55%, 73% cumulatively.
  assert.deepEqual([...new Set(draws(3n, 2000, 1, 0.5))].sort(), [1, 4]);
  const seen = new Set(draws(3n, 2000, 1, 0.6));
  assert.deepEqual([...seen].sort(), [1, 2, 4]);
  assert.deepEqual(new Set(draws(3n, 200, 1, 0.01)), new Set([1]), 'a tiny p is greedy');
  assert.ok(new Set(draws(3n, 2000, 1, 1)).size === logits.length, 'p = 1 can draw every token');
});

test('sampling follows the softmax distribution', () => {
  const n = 20_000;
  const counts = new Array<number>(logits.length).fill(0);
  for (const id of draws(11n, n, 1, 1)) counts[id]! += 1;
  const weights = Array.from(logits, (l) => Math.exp(l));
  const total = weights.reduce((a, b) => a + b, 0);
  weights.forEach((w, id) => assert.ok(Math.abs(counts[id]! / n - w / total) < 0.015, `token ${id}`));
});

test('the seeded stream is uniform in [0, 1) and reproducible', () => {
  const a = new SeededRandom(123n);
  const b = new SeededRandom(123n);
  const xs = Array.from({ length: 1000 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 1000 }, () => b.next()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05);
  assert.notEqual(SeededRandom.randomSeed(), SeededRandom.randomSeed());
});
