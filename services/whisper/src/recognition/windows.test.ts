import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planWindows } from './windows.js';

const whisper = { chunkSeconds: 30, strideSeconds: 5 };

test('audio up to one window is one window with no strides', () => {
  assert.deepEqual(planWindows(10 * 100, whisper, 100), [
    { start: 0, end: 1000, strideLeft: 0, strideRight: 0 },
  ]);
  assert.deepEqual(planWindows(30 * 100, whisper, 100), [
    { start: 0, end: 3000, strideLeft: 0, strideRight: 0 },
  ]);
});

test('45 s: two windows 20 s apart, overlapping by 10 s, strides only on the inner edges', () => {
  assert.deepEqual(planWindows(45 * 100, whisper, 100), [
    { start: 0, end: 3000, strideLeft: 0, strideRight: 500 },
    { start: 2000, end: 4500, strideLeft: 500, strideRight: 0 },
  ]);
});

test('every sample is covered, windows in order, the last one reaches the end', () => {
  for (const seconds of [31, 59.99, 60, 61, 3600]) {
    const samples = Math.round(seconds * 100);
    const windows = planWindows(samples, whisper, 100);
    assert.equal(windows[0]!.start, 0);
    assert.equal(windows.at(-1)!.end, samples);
    for (let i = 1; i < windows.length; i++) {
      assert.ok(windows[i]!.start < windows[i - 1]!.end, 'consecutive windows overlap');
      assert.ok(windows[i]!.start > windows[i - 1]!.start);
    }
    assert.ok(windows.every((w) => w.end - w.start <= 3000));
  }
});

test('a stride of half the window or more is refused', () => {
  assert.throws(() => planWindows(100, { chunkSeconds: 30, strideSeconds: 15 }, 100));
});
