// Windowed recognition with the real tiny random-weight Whisper (libs/models-dev) on ONNX Runtime:
// which windows reach the model, when the model and language are settled, that model work is asked
// per window rather than once per file, and that a long file's windows in flight share passes of the
// worker's batching queue without changing its transcript.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { withSpan } from '@switchboard/telemetry';
import { captureSpans } from '@switchboard/telemetry/test-support';
import { SAMPLE_RATE } from '../audio/pcm.js';
import { directRecognizer, RecognitionQueue, type WindowRecognizer } from './recognition-queue.js';
import { recognizeWindows } from './recognize-windows.js';
import { loadTinyWhisper, type TinyWhisper } from '../adapters/tiny-whisper.test-support.js';
import type { SpeechModel } from './speech-model.js';
import { streamWindows } from './windows.js';

let tiny: TinyWhisper;
let model: SpeechModel;

before(async () => {
  tiny = await loadTinyWhisper();
  model = tiny.model;
});
after(async () => {
  await tiny?.remove();
});

/** `seconds` of audio, a −20 dBFS tone where `loud(second)` says so and digital silence elsewhere. */
async function* audio(seconds: number, loud: (second: number) => boolean): AsyncGenerator<Float32Array> {
  for (let second = 0; second < seconds; second++) {
    yield Float32Array.from({ length: SAMPLE_RATE }, (_, i) =>
      loud(second) ? 0.14 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE) : 0,
    );
  }
}

function recognize(samples: AsyncIterable<Float32Array>, language = '') {
  const calls = { choose: 0, detect: 0, windows: 0 };
  const counting: WindowRecognizer = {
    detectLanguage: (...args) => {
      calls.detect += 1;
      return directRecognizer.detectLanguage(...args);
    },
    recognize: (...args) => {
      calls.windows += 1;
      return directRecognizer.recognize(...args);
    },
  };
  const result = recognizeWindows(
    streamWindows(samples, { chunkSeconds: 30, strideSeconds: 5 }, SAMPLE_RATE),
    {
      choose: () => {
        calls.choose += 1;
        return { model, language };
      },
      recognizer: counting,
      signal: new AbortController().signal,
    },
  );
  return { calls, result };
}

test('silent windows never reach the model; the model and language are settled once, at the first window with sound', async () => {
  // 100 s: windows start at 0, 20, 40, 60 and 80 s; sound from 30 to 70 s reaches the middle three.
  const { calls, result } = recognize(audio(100, (s) => s >= 30 && s < 70));
  const recognition = await result;
  assert.deepEqual(calls, { choose: 1, detect: 1, windows: 3 });
  assert.equal(recognition.model, model);
  assert.equal(recognition.samples, 100 * SAMPLE_RATE);
  assert.ok(recognition.language && model.languages.has(recognition.language), recognition.language);
  assert.ok(recognition.recognitionSeconds > 0);
});

test('a forced language is used as given', async () => {
  const { result } = recognize(
    audio(10, () => true),
    'de',
  );
  assert.equal((await result).language, 'de');
});

test('all-silent audio never runs the model: no language, no text, its length still counted', async () => {
  const { calls, result } = recognize(audio(65, () => false));
  const recognition = await result;
  assert.deepEqual(calls, { choose: 0, detect: 0, windows: 0 });
  assert.deepEqual(
    [recognition.model, recognition.language, recognition.text, recognition.chunks],
    [undefined, undefined, '', []],
  );
  assert.equal(recognition.samples, 65 * SAMPLE_RATE);
});

test('a forced language runs no detection', async () => {
  const { calls, result } = recognize(
    audio(10, () => true),
    'de',
  );
  await result;
  assert.deepEqual(calls, { choose: 1, detect: 0, windows: 1 });
});

/**
 * 100 s of sound (windows at 0, 20, 40, 60 and 80 s) through a RecognitionQueue of one pass at a
 * time, with `inFlight` windows of the file out at once. The first pass is held until the file
 * has been read as far as its windows in flight allow, so the batches that form do not depend on
 * how fast this machine decodes.
 */
async function longFile(maxBatch: number) {
  let secondsRead = 0;
  async function* counted(): AsyncGenerator<Float32Array> {
    for await (const second of audio(100, () => true)) {
      secondsRead += 1;
      yield second;
    }
  }
  let held = maxBatch > 1;
  const gated: SpeechModel = Object.create(model) as SpeechModel;
  gated.recognizeWindows = async (requests) => {
    if (held) {
      held = false;
      // Window k (of 0…) ends at 20k + 30 s and is handed out once one more second is read: with
      // `maxBatch` windows out, the file is read to 20·(maxBatch − 1) + 31 s, then reading waits.
      while (secondsRead < Math.min(100, 20 * (maxBatch - 1) + 31)) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    return model.recognizeWindows(requests);
  };
  const batches: number[] = [];
  const passes: { model: string; windows: number; seconds: number }[] = [];
  const queue = new RecognitionQueue({
    concurrency: 1,
    depth: 16,
    maxBatch,
    onBatch: (size) => batches.push(size),
    onPass: (passModel, windows, seconds) => passes.push({ model: passModel.id, windows, seconds }),
  });
  const recognition = await recognizeWindows(
    streamWindows(counted(), { chunkSeconds: 30, strideSeconds: 5 }, SAMPLE_RATE),
    {
      choose: () => ({ model: gated, language: 'en' }),
      recognizer: queue,
      inFlight: maxBatch,
      signal: new AbortController().signal,
    },
  );
  return { recognition, batches, passes, secondsRead };
}

test('a long file keeps up to maxBatch windows in flight: they share passes, and the transcript is the one-at-a-time transcript', async () => {
  const alone = await longFile(1);
  assert.deepEqual(alone.batches, [1, 1, 1, 1, 1]);
  const batched = await longFile(4);
  // The first window runs at once, alone; the next three wait for it together; the last comes after.
  assert.deepEqual(batched.batches, [1, 3, 1]);
  assert.ok(batched.recognition.text.length > 0);
  assert.equal(batched.recognition.text, alone.recognition.text);
  assert.deepEqual(batched.recognition.chunks, alone.recognition.chunks);
  assert.equal(batched.recognition.samples, 100 * SAMPLE_RATE);
});

test("each window is a whisper.recognize span in the caller's trace, with its index and its pass's size; each pass is timed for its model", async () => {
  const spans = captureSpans();
  const { passes, call } = await withSpan('test', 'transcribe call', {}, async (span) => ({
    ...(await longFile(4)),
    call: span.spanContext(),
  }));
  const windows = spans.named('whisper.recognize');
  assert.equal(windows.length, 5, 'one span per window');
  for (const span of windows) {
    assert.equal(span.parentSpanId, call.spanId);
    assert.equal(span.traceId, call.traceId);
  }
  assert.deepEqual(windows.map((span) => span.attributes['whisper.window']).sort(), [0, 1, 2, 3, 4]);
  // Passes of 1, 3 and 1 windows (as in the test above): each window carries its pass's size.
  const sizes = windows
    .sort((a, b) => Number(a.attributes['whisper.window']) - Number(b.attributes['whisper.window']))
    .map((span) => span.attributes['whisper.batch_size']);
  assert.deepEqual(sizes, [1, 3, 3, 3, 1]);
  assert.deepEqual(
    passes.map(({ model: id, windows: size }) => ({ id, size })),
    [
      { id: 'tiny', size: 1 },
      { id: 'tiny', size: 3 },
      { id: 'tiny', size: 1 },
    ],
  );
  assert.ok(passes.every(({ seconds }) => seconds >= 0));
});

test("language detection is a span of its own in the caller's trace", async () => {
  const spans = captureSpans();
  const call = await withSpan('test', 'transcribe call', {}, async (span) => {
    await recognize(audio(10, () => true)).result;
    return span.spanContext();
  });
  const detections = spans.named('whisper.detect_language');
  assert.equal(detections.length, 1);
  assert.equal(detections[0]!.parentSpanId, call.spanId);
  assert.equal(typeof detections[0]!.attributes['whisper.language'], 'string');
});

test('while its windows in flight are full, nothing more of the file is read', async () => {
  let secondsRead = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const stalled: SpeechModel = Object.create(model) as SpeechModel;
  stalled.recognizeWindows = async (requests) => {
    await released;
    return model.recognizeWindows(requests);
  };
  async function* counted(): AsyncGenerator<Float32Array> {
    for await (const second of audio(100, () => true)) {
      secondsRead += 1;
      yield second;
    }
  }
  const result = recognizeWindows(
    streamWindows(counted(), { chunkSeconds: 30, strideSeconds: 5 }, SAMPLE_RATE),
    {
      choose: () => ({ model: stalled, language: 'en' }),
      recognizer: new RecognitionQueue({ concurrency: 1, depth: 16, maxBatch: 2 }),
      inFlight: 2,
      signal: new AbortController().signal,
    },
  );
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  // Two windows out (0–30 s and 20–50 s, the second known complete at 51 s); reading stopped there.
  assert.equal(secondsRead, 51);
  release();
  assert.equal((await result).samples, 100 * SAMPLE_RATE);
});
