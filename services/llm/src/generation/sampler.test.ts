import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRandom } from '@switchboard/models';
import { argmax, sampleToken, type SamplingParams } from './sampler.js';

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

/**
 * The straightforward sampler, for comparison at real vocabulary sizes: Math.exp for every token,
 * a full sort for top_p, and the inverse CDF over the candidates. It is built once per logits row
 * and returns the token a uniform number u picks, so many draws cost little.
 */
function referenceSampler(
  logits: Float32Array,
  { temperature, topP }: SamplingParams,
): (u: number) => number {
  let max = -Infinity;
  for (const l of logits) if (l > max) max = l;
  const weights = Float64Array.from(logits, (l) => Math.exp((l - max) / temperature));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let candidates = Array.from({ length: logits.length }, (_, i) => i);
  if (topP < 1) {
    candidates.sort((a, b) => weights[b]! - weights[a]! || a - b);
    let mass = 0;
    let count = 0;
    while (count < candidates.length) {
      mass += weights[candidates[count++]!]! / total;
      if (mass >= topP) break;
    }
    candidates = candidates.slice(0, count);
  }
  const kept = candidates.reduce((sum, id) => sum + weights[id]!, 0);
  return (u) => {
    let target = u * kept;
    for (const id of candidates) {
      target -= weights[id]!;
      if (target < 0) return id;
    }
    return candidates[candidates.length - 1]!;
  };
}

const REAL_VOCABULARY = 128_256;

function gaussianLogits(seed: bigint, sigma: number, map: (logit: number, id: number) => number = (l) => l) {
  const logits = new SeededRandom(seed).normals(REAL_VOCABULARY);
  return logits.map((l, id) => map(l * sigma, id));
}

test('at a 128,256-token vocabulary, the same seed draws the same tokens as the straightforward sampler', () => {
  const rows: [string, Float32Array][] = [
    ['flat (σ 1)', gaussianLogits(1n, 1)],
    ['peaked like a trained model (σ 4)', gaussianLogits(2n, 4)],
    ['one token far ahead', gaussianLogits(3n, 1, (l, id) => (id === 77_777 ? l + 30 : l))],
    ['many equal logits (ties by id)', gaussianLogits(4n, 3, (l) => Math.round(l * 2) / 2)],
    ['half the vocabulary masked (−∞)', gaussianLogits(5n, 2, (l, id) => (id % 2 ? -Infinity : l))],
  ];
  const settings: SamplingParams[] = [
    { temperature: 0.7, topP: 1 },
    { temperature: 0.7, topP: 0.9 },
    { temperature: 1.3, topP: 0.5 },
    { temperature: 1, topP: 0.99 },
    { temperature: 0.7, topP: 0.999_999 },
  ];
  for (const [name, logits] of rows) {
    for (const params of settings) {
      const reference = referenceSampler(logits, params);
      const random = new SeededRandom(99n);
      const uniform = new SeededRandom(99n);
      for (let draw = 0; draw < 200; draw++) {
        const expected = reference(uniform.next());
        assert.equal(
          sampleToken(logits, params, random),
          expected,
          `${name}, ${JSON.stringify(params)}, draw ${draw}`,
        );
      }
    }
  }
});

test('a masked (−∞) token is never drawn, and logits with no finite value fall back to the first', () => {
  const logits = Float32Array.from([-Infinity, 1, -Infinity, 1.5]);
  const seen = new Set<number>();
  const random = new SeededRandom(5n);
  for (let i = 0; i < 500; i++) seen.add(sampleToken(logits, { temperature: 1, topP: 0.95 }, random));
  assert.deepEqual([...seen].sort(), [1, 3]);
  const none = new Float32Array(4).fill(-Infinity);
  assert.equal(sampleToken(none, { temperature: 0.7, topP: 1 }, random), 0);
  assert.equal(sampleToken(none, { temperature: 0.7, topP: 0.9 }, random), 0);
});

test('argmax is the first largest logit, whichever of its lanes holds it', () => {
  const firstMax = (logits: Float32Array) => {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    return best;
  };
  for (const logits of [
    Float32Array.from([3, 3, 3, 3, 3, 3, 3, 3, 4, 4]),
    Float32Array.from([0, 2, 2, 0, 2]),
    Float32Array.from([1, 1, 1, 1, 1]),
    Float32Array.from([1, 2, 3, 4, 5, 5, 5, 5, 5]),
    Float32Array.from([7]),
    gaussianLogits(6n, 4).subarray(0, 100_003),
    gaussianLogits(7n, 3, (l) => Math.round(l)),
  ]) {
    assert.equal(argmax(logits), firstMax(logits), Array.from(logits.subarray(0, 10)).join());
  }
  assert.equal(argmax(new Float32Array(5).fill(-Infinity)), 0);
});
