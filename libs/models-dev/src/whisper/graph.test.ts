// The tiny Whisper's two graphs in real ONNX Runtime sessions: the documented names, types and
// symbolic dims; shapes through a prefill and cached steps; the KV cache giving the same logits
// as a full recomputation; and the structure prior's Whisper-shaped scores.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { tinyWhisperFiles } from './build.js';
import { WINDOW_TOKENS } from './logits-prior.js';
import { argmax, emptyPast, int64, logitsAt, pastFrom, type Feeds } from './testing.js';

const { files, shape: s, ids } = tinyWhisperFiles({ seed: 11 });
const headDim = s.dModel / s.decoderHeads;
const encoderPromise = InferenceSession.create(files.get('onnx/encoder_model.onnx') ?? new Uint8Array());
const decoderPromise = InferenceSession.create(
  files.get('onnx/decoder_model_merged.onnx') ?? new Uint8Array(),
);
const KINDS = ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value'];
const cacheNames = (prefix: string): string[] =>
  Array.from({ length: s.decoderLayers }, (_, i) => KINDS.map((k) => `${prefix}.${i}.${k}`)).flat();
const prompt = [ids.startOfTranscript, ids.languages.en, ids.transcribe];

function features(batch: number): Tensor {
  const data = Float32Array.from({ length: batch * 80 * 3000 }, (_, i) => Math.sin(i * 0.37) * 0.8);
  return new Tensor('float32', data, [batch, 80, 3000]);
}

async function encode(batch = 1): Promise<Tensor> {
  const out = await (await encoderPromise).run({ input_features: features(batch) });
  const states = out['last_hidden_state'];
  if (!states) throw new Error('no last_hidden_state');
  return states;
}

function assertClose(a: Float32Array, b: Float32Array, tol = 1e-4): void {
  assert.equal(a.length, b.length);
  const worst = a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] ?? NaN))), 0);
  assert.ok(worst <= tol, `max difference ${worst}`);
}

const meta = (
  session: InferenceSession,
  which: 'inputMetadata' | 'outputMetadata',
): Record<string, unknown> =>
  Object.fromEntries(
    session[which].map((m) => [m.name, m.isTensor ? { type: m.type, shape: m.shape } : null]),
  );

test('the encoder maps input_features [batch, 80, 3000] to last_hidden_state [batch, 1500, d]', async () => {
  const encoder = await encoderPromise;
  assert.deepEqual(encoder.inputNames, ['input_features']);
  assert.deepEqual(encoder.outputNames, ['last_hidden_state']);
  assert.deepEqual(meta(encoder, 'inputMetadata')['input_features'], {
    type: 'float32',
    shape: ['batch_size', 80, 3000],
  });
  const one = await encode(1);
  assert.deepEqual(one.dims, [1, 1500, s.dModel]);
  const data = one.data as Float32Array;
  assert.ok(data.every(Number.isFinite));
  assert.ok(new Set(data).size > data.length / 2, 'hidden states vary');
  const two = await encode(2);
  assert.deepEqual(two.dims, [2, 1500, s.dModel]);
});

test('the merged decoder has the input/output names, types and dims Transformers.js feeds for Whisper', async () => {
  const decoder = await decoderPromise;
  assert.deepEqual(decoder.inputNames, [
    'input_ids',
    'encoder_hidden_states',
    ...cacheNames('past_key_values'),
  ]);
  assert.deepEqual(decoder.outputNames, ['logits', ...cacheNames('present')]);
  assert.ok(!decoder.inputNames.includes('use_cache_branch'));
  const inputs = meta(decoder, 'inputMetadata');
  assert.deepEqual(inputs['input_ids'], { type: 'int64', shape: ['batch_size', 'decoder_sequence_length'] });
  assert.deepEqual(inputs['encoder_hidden_states'], {
    type: 'float32',
    shape: ['batch_size', 'encoder_sequence_length', s.dModel],
  });
  for (const name of cacheNames('past_key_values')) {
    const len = name.includes('.decoder.') ? 'past_decoder_sequence_length' : 'encoder_sequence_length_out';
    assert.deepEqual(inputs[name], { type: 'float32', shape: ['batch_size', s.decoderHeads, len, headDim] });
  }
  const outputs = meta(decoder, 'outputMetadata');
  assert.deepEqual(outputs['logits'], {
    type: 'float32',
    shape: ['batch_size', 'decoder_sequence_length', s.vocabSize],
  });
});

test('prefill with empty pasts, then cached steps: shapes grow by one, logits equal a full recomputation', async () => {
  const decoder = await decoderPromise;
  const states = await encode();
  const first = await decoder.run({
    input_ids: int64([prompt]),
    encoder_hidden_states: states,
    ...emptyPast(s, 1),
  });
  assert.deepEqual(first['logits']?.dims, [1, 3, s.vocabSize]);
  for (const name of cacheNames('present')) {
    const len = name.includes('.decoder.') ? 3 : 1500;
    assert.deepEqual(first[name]?.dims, [1, s.decoderHeads, len, headDim], name);
  }
  let past: Feeds = pastFrom(first);
  const steps = [ids.timestampBegin, 300, 301];
  let last = first;
  for (const [n, token] of steps.entries()) {
    last = await decoder.run({ input_ids: int64([[token]]), encoder_hidden_states: states, ...past });
    assert.deepEqual(last['logits']?.dims, [1, 1, s.vocabSize]);
    assert.deepEqual(last['present.1.decoder.value']?.dims, [1, s.decoderHeads, 4 + n, headDim]);
    assert.deepEqual(last['present.1.encoder.value']?.dims, [1, s.decoderHeads, 1500, headDim]);
    past = pastFrom(last);
  }
  const full = await decoder.run({
    input_ids: int64([[...prompt, ...steps]]),
    encoder_hidden_states: states,
    ...emptyPast(s, 1),
  });
  assert.deepEqual(full['logits']?.dims, [1, 6, s.vocabSize]);
  assertClose(logitsAt(last['logits']), logitsAt(full['logits']));
  assertClose(logitsAt(first['logits']), logitsAt(full['logits'], 0, 2));
  // The encoder pasts fed back are ignored: cross-attention keys/values come from the states.
  const zeroed: Feeds = { ...past };
  for (const name of cacheNames('past_key_values').filter((n) => n.includes('.encoder.'))) {
    zeroed[name] = new Tensor('float32', new Float32Array(1500 * s.dModel), [
      1,
      s.decoderHeads,
      1500,
      headDim,
    ]);
  }
  const feeds = { input_ids: int64([[302]]), encoder_hidden_states: states };
  assertClose(
    logitsAt((await decoder.run({ ...feeds, ...zeroed }))['logits']),
    logitsAt((await decoder.run({ ...feeds, ...past }))['logits']),
    0,
  );
});

test('batch rows are independent, and the audio changes the logits', async () => {
  const decoder = await decoderPromise;
  const run = async (states: Tensor, batch: number): Promise<Tensor | undefined> =>
    (
      await decoder.run({
        input_ids: int64(Array.from({ length: batch }, () => prompt)),
        encoder_hidden_states: states,
        ...emptyPast(s, batch),
      })
    )['logits'];
  // Row r of features(2) is the audio of features(1) for r = 0 and other audio for r = 1.
  const batched = await run(await encode(2), 2);
  const single = await run(await encode(1), 1);
  assertClose(logitsAt(batched, 0), logitsAt(single));
  assert.notDeepEqual(logitsAt(batched, 1), logitsAt(single));
});

test('the structure prior: a first timestamp of 0.00, text next, and eos only after a late timestamp', async () => {
  const decoder = await decoderPromise;
  const states = await encode();
  const scores = async (tokens: number[]): Promise<Float32Array> =>
    logitsAt(
      (await decoder.run({ input_ids: int64([tokens]), encoder_hidden_states: states, ...emptyPast(s, 1) }))[
        'logits'
      ],
    );
  const text = (l: Float32Array): number => Math.max(...l.subarray(0, ids.endOfText));
  const timestamps = (l: Float32Array): Float32Array => l.subarray(ids.timestampBegin);
  const logSumExp = (v: Float32Array): number => {
    const m = Math.max(...v);
    return m + Math.log(v.reduce((a, x) => a + Math.exp(x - m), 0));
  };

  const start = await scores(prompt);
  assert.equal(argmax(timestamps(start)), 0, 'the first timestamp is <|0.00|>');
  for (const id of [ids.startOfTranscript, ids.languages.en, ids.transcribe, ids.noTimestamps]) {
    assert.ok((start[id] ?? 0) < text(start) - 10, `prompt token ${id} is never generated`);
  }
  // Early in a window, after text: text beats eos and any single timestamp.
  const early = await scores([...prompt, ids.timestampBegin, 300, 301]);
  assert.ok(text(early) > (early[ids.endOfText] ?? 0));
  assert.ok(text(early) > Math.max(...timestamps(early)));
  assert.ok(logSumExp(timestamps(early)) > (early[ids.endOfText] ?? 0), 'timestamp mass stays above eos');
  // After a timestamp that closes a segment early: a second timestamp (the pair) beats eos, and
  // it repeats the same time.
  const textTokens = Array.from({ length: 7 }, (_, i) => 300 + (i % 3));
  const closeAt = ids.timestampBegin + 8 * 30;
  const pair = await scores([...prompt, ids.timestampBegin, ...textTokens, closeAt]);
  assert.ok(logSumExp(timestamps(pair)) > (pair[ids.endOfText] ?? 0));
  assert.equal(ids.timestampBegin + argmax(timestamps(pair)), closeAt);
  // Past the planned window: after text the timestamp mass beats the best text within a few
  // tokens, and after that timestamp eos beats every timestamp.
  const long = Array.from({ length: WINDOW_TOKENS + 8 }, (_, i) => 300 + (i % 5));
  const late = await scores([...prompt, ids.timestampBegin, ...long]);
  assert.ok(logSumExp(timestamps(late)) > text(late));
  const closed = await scores([...prompt, ids.timestampBegin, ...long, ids.timestampBegin + 1500]);
  assert.ok(logSumExp(timestamps(closed)) < (closed[ids.endOfText] ?? 0));
});

test('the encoder zeroes the positions after the audio; timestamps stop where the audio ends', async () => {
  // 10 s of sound, then the constant frames the feature extractor produces for its zero padding.
  const frames = 1000;
  const data = new Float32Array(80 * 3000).fill(-0.5);
  for (let bin = 0; bin < 80; bin++) {
    for (let t = 0; t < frames; t++) data[bin * 3000 + t] = Math.sin(bin * 0.3 + t * 0.07);
  }
  const out = await (
    await encoderPromise
  ).run({ input_features: new Tensor('float32', data, [1, 80, 3000]) });
  const states = out['last_hidden_state'] as Tensor;
  const hidden = states.data as Float32Array;
  const position = (p: number): Float32Array => hidden.subarray(p * s.dModel, (p + 1) * s.dModel);
  assert.ok(
    position(frames / 2 - 1).some((v) => v !== 0),
    'the last position with sound is kept',
  );
  for (const p of [frames / 2, 1000, 1499])
    assert.ok(
      position(p).every((v) => v === 0),
      `position ${p} is zero`,
    );

  const decoder = await decoderPromise;
  const textTokens = Array.from({ length: 30 }, (_, i) => 300 + (i % 4));
  const logits = logitsAt(
    (
      await decoder.run({
        input_ids: int64([[...prompt, ids.timestampBegin, ...textTokens]]),
        encoder_hidden_states: states,
        ...emptyPast(s, 1),
      })
    )['logits'],
  );
  assert.equal(
    argmax(logits, ids.timestampBegin),
    ids.timestampBegin + frames / 2 - 1,
    'the last timestamp is ≈ 10 s',
  );
});
