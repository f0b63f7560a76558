// Chaining plans: exactly the asked frame count, no repeated seam frame (later segments skip their
// first frame), a partial last segment, and decode chunks covering exactly the frames written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeChunks, planSegments } from './segments.js';

const written = (total: number, perPass: number): number =>
  planSegments(total, perPass).reduce((n, s) => n + s.write, 0);

test('one pass covers up to framesPerPass frames; each later segment adds framesPerPass − 1', () => {
  assert.deepEqual(planSegments(1, 8), [{ skip: 0, write: 1 }]);
  assert.deepEqual(planSegments(8, 8), [{ skip: 0, write: 8 }]);
  assert.deepEqual(planSegments(9, 8), [
    { skip: 0, write: 8 },
    { skip: 1, write: 1 },
  ]);
  // 48 = 8 + 6 · 7 − 2: seven segments, the last one partial (5 of its 7 new frames).
  const plan = planSegments(48, 8);
  assert.equal(plan.length, 7);
  assert.deepEqual(plan.at(-1), { skip: 1, write: 5 });
  for (const [total, perPass] of [
    [48, 8],
    [96, 8],
    [25, 25],
    [26, 25],
    [100, 14],
    [7, 2],
  ] as const) {
    assert.equal(written(total, perPass), total, `${total} frames at ${perPass} per pass`);
  }
  assert.throws(() => planSegments(0, 8), /frame count/);
  assert.throws(() => planSegments(5, 1), /frames per pass/);
});

test('decode chunks cover the written frames of the pass, at most chunkSize at a time', () => {
  assert.deepEqual(decodeChunks({ skip: 0, write: 8 }, 8), [[0, 8]]);
  assert.deepEqual(decodeChunks({ skip: 1, write: 7 }, 3), [
    [1, 4],
    [4, 7],
    [7, 8],
  ]);
  assert.deepEqual(decodeChunks({ skip: 1, write: 1 }, 8), [[1, 2]]);
});
