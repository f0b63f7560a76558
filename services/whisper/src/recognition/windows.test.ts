import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planWindows, streamWindows } from './windows.js';

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

/** `total` samples numbered 0, 1, 2, … in chunks of `chunk`, as a decoder would hand them over. */
async function* counting(total: number, chunk: number): AsyncGenerator<Float32Array> {
  for (let at = 0; at < total; at += chunk) {
    yield Float32Array.from({ length: Math.min(chunk, total - at) }, (_, i) => at + i);
  }
}

test('streamed windows are the planned windows, with their own samples, for any chunking', async () => {
  for (const seconds of [0, 0.01, 10, 30, 30.01, 45, 50, 59.99, 60, 61, 300]) {
    const total = Math.round(seconds * 100);
    for (const chunk of [1, 7, 100, 3000, 3001, 100_000]) {
      const got = [];
      for await (const { samples, ...window } of streamWindows(counting(total, chunk), whisper, 100)) {
        // Each window holds exactly its own stretch of the audio, overlap included.
        assert.equal(samples.length, window.end - window.start);
        assert.ok(
          samples.every((value, i) => value === window.start + i),
          `${seconds} s / ${chunk}`,
        );
        got.push(window);
      }
      assert.deepEqual(got, total === 0 ? [] : planWindows(total, whisper, 100), `${seconds} s / ${chunk}`);
    }
  }
});

test('memory is one window: the same buffer is handed out every time, never read ahead', async () => {
  let pulled = 0;
  async function* tracked(): AsyncGenerator<Float32Array> {
    for await (const chunk of counting(3600 * 100, 500)) {
      pulled += chunk.length;
      yield chunk;
    }
  }
  const buffers = new Set<ArrayBufferLike>();
  for await (const window of streamWindows(tracked(), whisper, 100)) {
    buffers.add(window.samples.buffer);
    // Read at most one chunk past the window handed out.
    assert.ok(pulled <= window.end + 500, `pulled ${pulled} samples for a window ending at ${window.end}`);
  }
  assert.equal(buffers.size, 1);
  assert.equal(pulled, 3600 * 100);
});
