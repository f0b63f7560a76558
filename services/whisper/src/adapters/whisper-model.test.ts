// Batched recognition with the real tiny random-weight Whisper (libs/models-dev) on ONNX Runtime:
// windows decoded together give exactly the tokens each gives alone, a batch of one gives exactly
// what Transformers.js's own Whisper generate gives (timestamps on), and a row whose caller leaves
// ends without disturbing the others. Rows end at different steps here (windows of different
// lengths), so a batch that let a finished row run on, or kept its padding, would differ.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Tensor } from '@huggingface/transformers';
import { AutoProcessor, WhisperForConditionalGeneration } from '@huggingface/transformers';
import { SAMPLE_RATE } from '../audio/pcm.js';
import type { SpeechModel, WindowRequest } from '../recognition/speech-model.js';
import { loadTinyWhisper, type TinyWhisper } from './tiny-whisper.test-support.js';

let tiny: TinyWhisper;
let model: SpeechModel;

before(async () => {
  tiny = await loadTinyWhisper();
  model = tiny.model;
});
after(async () => {
  await tiny?.remove();
});

const live = () => new AbortController().signal;

/** `seconds` of a tone at `hz` that sounds every other second, over a little seeded noise. */
function sound(seconds: number, hz: number, seed: number): Float32Array {
  let state = seed;
  const noise = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31 - 0.5) * 0.02;
  return Float32Array.from({ length: seconds * SAMPLE_RATE }, (_, i) => {
    const on = Math.floor(i / SAMPLE_RATE) % 2 === 0;
    return (on ? 0.15 * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE) : 0) + noise();
  });
}

/** Three different windows: lengths (so the rows end at different steps), sounds and languages. */
const windows = (): WindowRequest[] => [
  { samples: sound(30, 440, 1), language: 'en', signal: live() },
  { samples: sound(7, 987, 2), language: 'de', signal: live() },
  { samples: sound(18, 220, 3), language: 'fr', signal: live() },
];

async function alone(request: WindowRequest): Promise<number[]> {
  const [tokens] = await model.recognizeWindows([request]);
  assert.ok(Array.isArray(tokens), String(tokens));
  return tokens;
}

test('one pass over three different windows gives exactly the tokens each window gives alone, and ends with its longest row', async () => {
  const requests = windows();
  assert.equal(new Set(requests.map((r) => model.batchKey(r.language))).size, 1, 'one key: one pass');
  const lone = [];
  for (const request of requests) lone.push(await alone(request));
  assert.equal(new Set(lone.map((tokens) => tokens.length)).size, 3, 'the rows end at different steps');
  const looks = { count: 0 };
  requests[0] = { ...requests[0]!, signal: abortingAtLook(Infinity, new Error('never'), looks) };
  assert.deepEqual(await model.recognizeWindows(requests), lone);
  // A row is looked at once per decoding step, and once before and after the pass: the pass took
  // as many steps as its longest row needed alone. (The tiny model's prior repeats <|endoftext|>
  // after <|endoftext|> by itself; whisper-batch-rows.test.ts checks that EndRows holds a
  // finished row there whatever the model says.)
  const longest = Math.max(...lone.map((tokens) => tokens.length));
  assert.equal(looks.count, longest - 3 + 2);
  // The order of the rows does not matter either.
  assert.deepEqual(await model.recognizeWindows([...requests].reverse()), [...lone].reverse());
});

test("a batch of one is exactly Transformers.js's own Whisper generate with timestamps", async () => {
  const processor = await AutoProcessor.from_pretrained('tiny', { local_files_only: true });
  const reference = await WhisperForConditionalGeneration.from_pretrained('tiny', {
    local_files_only: true,
    dtype: 'fp32',
  });
  try {
    for (const request of windows()) {
      const { input_features } = (await processor(request.samples)) as { input_features: Tensor };
      const ours = await alone(request);
      // <|startoftranscript|> <|language|> <|transcribe|>: what a lone call starts with.
      const prompt = ours.slice(0, 3);
      const sequences = (await reference.generate({
        inputs: input_features,
        decoder_input_ids: prompt,
        return_timestamps: true,
        max_new_tokens: 448 - prompt.length,
      })) as Tensor;
      assert.deepEqual(ours, (sequences.tolist() as bigint[][])[0]!.map(Number), request.language);
    }
  } finally {
    await reference.dispose();
  }
});

/**
 * A signal that aborts itself at the `n`-th look at `aborted` (the adapter looks once per decoding
 * step), counting the looks in `looks`.
 */
function abortingAtLook(n: number, reason: Error, looks = { count: 0 }): AbortSignal {
  const controller = new AbortController();
  const signal = controller.signal;
  Object.defineProperty(signal, 'aborted', {
    get() {
      looks.count += 1;
      if (looks.count === n) controller.abort(reason);
      return Reflect.get<AbortSignal, 'aborted'>(AbortSignal.prototype, 'aborted', signal);
    },
  });
  return signal;
}

test('a row whose caller leaves mid-way ends with its reason; the other rows still give their lone tokens', async () => {
  const requests = windows();
  const lone = [];
  for (const request of requests) lone.push(await alone(request));
  const gone = new Error('caller went away');
  // The first look is before the pass; the abort comes at the fifth decoding step.
  requests[0] = { ...requests[0]!, signal: abortingAtLook(6, gone) };
  const results = await model.recognizeWindows(requests);
  assert.equal(results[0], gone);
  assert.deepEqual(results.slice(1), lone.slice(1));
});

test('a row aborted before the pass is answered with its reason and not run', async () => {
  const requests = windows();
  const controller = new AbortController();
  controller.abort(new Error('left early'));
  requests[1] = { ...requests[1]!, signal: controller.signal };
  const results = await model.recognizeWindows(requests);
  assert.match(String(results[1]), /left early/);
  assert.deepEqual(results[0], await alone(requests[0]!));
  assert.deepEqual(results[2], await alone(requests[2]!));
});
