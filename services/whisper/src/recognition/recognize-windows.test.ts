// Windowed recognition with the real tiny random-weight Whisper (libs/models-dev) on ONNX Runtime:
// which windows reach the model, when the model and language are settled, and that one slot is taken per
// window rather than one per file.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { useLocalModels } from '@switchboard/models';
import { buildTinyWhisper } from '@switchboard/models-dev';
import { loadWhisperModel } from '../adapters/whisper-model.js';
import { SAMPLE_RATE } from '../audio/pcm.js';
import { recognizeWindows } from './recognize-windows.js';
import type { SpeechModel } from './speech-model.js';
import { streamWindows } from './windows.js';

let dir: string;
let model: SpeechModel;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'whisper-windows-'));
  await buildTinyWhisper(join(dir, 'whisper', 'tiny'), { seed: 0 });
  useLocalModels(join(dir, 'whisper'));
  model = await loadWhisperModel(
    { id: 'tiny', dir: '', description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
});
after(async () => {
  await model?.dispose();
  await rm(dir, { recursive: true, force: true });
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
  const calls = { choose: 0, slots: 0 };
  const result = recognizeWindows(
    streamWindows(samples, { chunkSeconds: 30, strideSeconds: 5 }, SAMPLE_RATE),
    {
      choose: () => {
        calls.choose += 1;
        return { model, language };
      },
      inSlot: (work) => {
        calls.slots += 1;
        return work();
      },
      signal: new AbortController().signal,
    },
  );
  return { calls, result };
}

test('silent windows never reach the model; the model and language are settled once, at the first window with sound', async () => {
  // 100 s: windows start at 0, 20, 40, 60 and 80 s; sound from 30 to 70 s reaches the middle three.
  const { calls, result } = recognize(audio(100, (s) => s >= 30 && s < 70));
  const recognition = await result;
  assert.deepEqual(calls, { choose: 1, slots: 3 });
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
  assert.deepEqual(calls, { choose: 0, slots: 0 });
  assert.deepEqual(
    [recognition.model, recognition.language, recognition.text, recognition.chunks],
    [undefined, undefined, '', []],
  );
  assert.equal(recognition.samples, 65 * SAMPLE_RATE);
});
