// The worker's recognition turns with the real tiny random-weight Whisper: windows of several
// transcriptions that wait together share one pass, a detection runs alone, and the gauges count
// transcriptions waiting (not their windows) and windows running.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SAMPLE_RATE } from '../audio/pcm.js';
import { RecognitionQueue } from './recognition-queue.js';
import { loadTinyWhisper, type TinyWhisper } from '../adapters/tiny-whisper.test-support.js';
import type { SpeechModel } from './speech-model.js';

let tiny: TinyWhisper;
let model: SpeechModel;

before(async () => {
  tiny = await loadTinyWhisper();
  model = tiny.model;
});
after(async () => {
  await tiny?.remove();
});

const tone = (seconds: number, hz: number) =>
  Float32Array.from(
    { length: seconds * SAMPLE_RATE },
    (_, i) => 0.14 * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE),
  );

test('windows of two transcriptions waiting together share a pass; gauges count waiting transcriptions and running windows', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const held: SpeechModel = Object.create(model) as SpeechModel;
  held.recognizeWindows = async (requests) => {
    if (first) {
      first = false;
      await released;
    }
    return model.recognizeWindows(requests);
  };
  const batches: number[] = [];
  const gauges: [number, number][] = [];
  const queue = new RecognitionQueue({
    concurrency: 1,
    depth: 8,
    maxBatch: 4,
    onBatch: (size) => batches.push(size),
    onDepth: (waiting, running) => gauges.push([waiting, running]),
  });
  const a = new AbortController().signal;
  const b = new AbortController().signal;
  const window = (hz: number, signal: AbortSignal, language: string) =>
    queue.recognize(held, { samples: tone(10, hz), language, signal });
  const results = [
    window(220, a, 'en'),
    window(440, a, 'en'),
    window(880, a, 'en'),
    // Another language, the same prompt length: the same pass.
    window(330, b, 'de'),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(gauges.at(-1), [2, 1], 'a and b wait (a with two windows); one window runs');
  release();
  const answered = await Promise.all(results);
  assert.deepEqual(batches, [1, 3]);
  assert.deepEqual(gauges.at(-1), [0, 0]);
  // Each window's tokens are those it gives alone.
  for (const [i, [hz, language]] of (
    [
      [220, 'en'],
      [440, 'en'],
      [880, 'en'],
      [330, 'de'],
    ] as const
  ).entries()) {
    const [alone] = await model.recognizeWindows([{ samples: tone(10, hz), language, signal: a }]);
    assert.deepEqual(answered[i]!.value, alone);
  }
  // The three windows of the second pass report the same pass.
  assert.equal(answered[1]!.started, answered[3]!.started);
});

test('a detection runs alone, in the same turns, and is no recognition batch', async () => {
  const batches: number[] = [];
  const queue = new RecognitionQueue({
    concurrency: 1,
    depth: 8,
    maxBatch: 4,
    onBatch: (n) => batches.push(n),
  });
  const signal = new AbortController().signal;
  const [detected, recognized] = await Promise.all([
    queue.detectLanguage(model, tone(5, 440), signal),
    queue.recognize(model, { samples: tone(5, 440), language: 'en', signal }),
  ]);
  assert.equal(detected.value, await model.detectLanguage(tone(5, 440)));
  assert.ok(detected.ended <= recognized.started, 'one pass at a time');
  assert.deepEqual(batches, [1]);
});

test("windows are served by owner in turns: one key's read-ahead does not hold another key's window back", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const order: string[] = [];
  const names = new Map<Float32Array, string>();
  const held: SpeechModel = Object.create(model) as SpeechModel;
  held.recognizeWindows = async (requests) => {
    order.push(...requests.map((request) => names.get(request.samples)!));
    if (order.length === 1) await released;
    return model.recognizeWindows(requests);
  };
  const queue = new RecognitionQueue({ concurrency: 1, depth: 8, maxBatch: 1 });
  const signal = new AbortController().signal;
  const window = (name: string, owner: string) => {
    const samples = tone(1, 440);
    names.set(samples, name);
    return queue.recognize(held, { samples, language: 'en', signal }, owner);
  };
  const results = [window('a0', 'key-a')];
  await new Promise((resolve) => setImmediate(resolve));
  results.push(window('a1', 'key-a'), window('a2', 'key-a'), window('a3', 'key-a'), window('b0', 'key-b'));
  release();
  await Promise.all(results);
  assert.deepEqual(order, ['a0', 'a1', 'b0', 'a2', 'a3']);
});
