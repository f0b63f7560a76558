// The built folder as a real model repository entry for Transformers.js (local files only): the
// automatic-speech-recognition pipeline over 45 s of audio in 30-s windows with timestamps, its
// plain-text mode, and Whisper-style language detection (encoder + one decoder step).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AutoProcessor,
  Tensor,
  WhisperForConditionalGeneration,
  env,
  pipeline,
} from '@huggingface/transformers';
import { buildTinyWhisper } from './build.js';
import { WINDOW_TOKENS } from './logits-prior.js';
import { syntheticAudio } from './testing.js';
import { WHISPER_LANGUAGES, languageToken } from './tokens.js';

const root = await mkdtemp(join(tmpdir(), 'models-dev-whisper-'));
after(() => rm(root, { recursive: true, force: true }));
const { ids } = await buildTinyWhisper(join(root, 'tiny-whisper'), { seed: 4 });
env.allowRemoteModels = false;
env.localModelPath = root;

const SAMPLING_RATE = 16000;
const audio = syntheticAudio(45, 7);

interface Chunk {
  text: string;
  timestamp: [number | null, number | null];
}
interface AsrOutput {
  text: string;
  chunks?: Chunk[];
}
interface ObservedSession {
  run: (feeds: Record<string, { dims: number[]; data: unknown }>) => Promise<unknown>;
}

/** The ASR pipeline, with its decoder session observed (not replaced): runs and prompts per window. */
async function observedPipeline(): Promise<{
  transcribe: (
    options: Record<string, unknown>,
  ) => Promise<{ out: AsrOutput; windows: number[][]; ms: number }>;
  dispose: () => Promise<unknown>;
}> {
  const asr = await pipeline('automatic-speech-recognition', 'tiny-whisper');
  const session = (asr.model as unknown as { sessions: Record<string, ObservedSession> }).sessions[
    'decoder_model_merged'
  ];
  if (!session) throw new Error('no decoder_model_merged session');
  const run = session.run.bind(session);
  let windows: number[][] = [];
  session.run = (feeds) => {
    const inputIds = feeds['input_ids'];
    const tokens = Array.from(inputIds?.data as BigInt64Array, Number);
    // A prompt (several tokens) starts a window; cached steps feed one token each.
    if (tokens.length > 1) windows.push(tokens);
    else windows.at(-1)?.push(...tokens);
    return run(feeds);
  };
  return {
    transcribe: async (options) => {
      windows = [];
      const start = performance.now();
      const out = (await asr(audio, options)) as AsrOutput;
      return { out, windows, ms: performance.now() - start };
    },
    dispose: () => asr.dispose(),
  };
}

test('the ASR pipeline transcribes 45 s in two 30-s windows with timestamps, quickly and repeatably', async (t) => {
  const asr = await observedPipeline();
  const options = {
    return_timestamps: true,
    chunk_length_s: 30,
    stride_length_s: 5,
    language: 'en',
    task: 'transcribe',
  };
  const { out, windows, ms } = await asr.transcribe(options);
  // 45 s with 30-s windows and 5-s strides: [0, 30) and [20, 45); one decoding pass each.
  assert.equal(windows.length, 2, `decoding passes: ${windows.length}`);
  for (const tokens of windows) {
    assert.deepEqual(tokens.slice(0, 4), [
      ids.startOfTranscript,
      ids.languages.en,
      ids.transcribe,
      ids.timestampBegin,
    ]);
    assert.ok(tokens.length < 3 + WINDOW_TOKENS + 15, `window of ${tokens.length} tokens`);
  }
  assert.equal(typeof out.text, 'string');
  assert.ok(out.text.length > 0, 'random text, but some');
  const chunks = out.chunks ?? [];
  assert.ok(chunks.length >= 2, `chunks: ${JSON.stringify(chunks)}`);
  for (const { text, timestamp } of chunks) {
    assert.equal(typeof text, 'string');
    for (const t of timestamp) {
      assert.ok(t === null || (typeof t === 'number' && t >= 0 && t <= 45.02), `timestamp ${t}`);
    }
    const [from, to] = timestamp;
    if (from !== null && to !== null) assert.ok(from <= to, `${from} ≤ ${to}`);
  }
  assert.equal(chunks.map((c) => c.text).join(''), out.text);
  // Times increase from 0 to the end of the audio (the model plans them by position and audio length).
  const times = chunks.flatMap((c) => c.timestamp).filter((t): t is number => t !== null);
  assert.equal(times[0], 0);
  assert.ok(Math.abs((times.at(-1) ?? 0) - 45) <= 0.04, `ends at ${times.at(-1)}`);
  assert.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
  );
  // Timing on a 2-core machine: ≈ 0.6 s (two windows of ≈ 55 decoder steps + features).
  t.diagnostic(
    `45 s of audio: ${ms.toFixed(0)} ms, windows of ${windows.map((w) => w.length).join(' and ')} tokens`,
  );
  assert.ok(ms < 10_000, `pipeline took ${ms.toFixed(0)} ms`);
  const again = await asr.transcribe(options);
  assert.deepEqual(again.out, out, 'greedy decoding is deterministic');
  await asr.dispose();
});

test('without timestamps the pipeline returns plain text; without a language it prompts English', async () => {
  const asr = await observedPipeline();
  const { out, windows } = await asr.transcribe({ chunk_length_s: 30, stride_length_s: 5 });
  assert.equal(windows.length, 2);
  for (const tokens of windows) {
    // 4.3.1 does not detect the language: it warns and uses <|en|>.
    assert.deepEqual(tokens.slice(0, 4), [
      ids.startOfTranscript,
      ids.languages.en,
      ids.transcribe,
      ids.noTimestamps,
    ]);
    assert.ok(
      tokens.slice(4).every((id) => id < ids.timestampBegin),
      'no timestamps generated',
    );
    assert.ok(tokens.length < 4 + WINDOW_TOKENS + 15, `window of ${tokens.length} tokens`);
  }
  assert.ok(out.text.length > 0);
  assert.equal(out.chunks, undefined);
  const french = await asr.transcribe({ chunk_length_s: 30, language: 'french', task: 'translate' });
  assert.deepEqual(french.windows[0]?.slice(0, 3), [ids.startOfTranscript, ids.languages.fr, ids.translate]);
  await asr.dispose();
});

test('language detection: encoder plus one decoder step from <|startoftranscript|>, argmax over language tokens', async () => {
  const processor = await AutoProcessor.from_pretrained('tiny-whisper');
  const model = await WhisperForConditionalGeneration.from_pretrained('tiny-whisper');
  const langToId = (model.generation_config as unknown as { lang_to_id: Record<string, number> }).lang_to_id;

  const detect = async (samples: Float32Array): Promise<{ code: string; features: Tensor }> => {
    const { input_features } = (await processor(samples.subarray(0, 30 * SAMPLING_RATE))) as {
      input_features: Tensor;
    };
    const { logits } = (await model({
      input_features,
      decoder_input_ids: new Tensor('int64', BigInt64Array.from([BigInt(ids.startOfTranscript)]), [1, 1]),
    })) as { logits: Tensor };
    assert.deepEqual(logits.dims, [1, 1, ids.end]);
    const scores = logits.data as Float32Array;
    const [best] = Object.entries(langToId).sort(([, a], [, b]) => (scores[b] ?? 0) - (scores[a] ?? 0));
    const code = best?.[0].slice(2, -2) ?? '';
    return { code, features: input_features };
  };

  const { code, features } = await detect(audio);
  assert.ok((WHISPER_LANGUAGES as readonly string[]).includes(code), `detected ${code}`);
  assert.deepEqual(await detect(audio), { code, features }, 'deterministic');
  // The detected language then drives the prompt of the real transcription.
  const sequences = (await model.generate({
    inputs: features,
    language: code,
    task: 'transcribe',
    return_timestamps: true,
  })) as Tensor;
  const tokens = Array.from(sequences.data as BigInt64Array, Number);
  assert.deepEqual(tokens.slice(0, 4), [
    ids.startOfTranscript,
    langToId[languageToken(code)],
    ids.transcribe,
    ids.timestampBegin,
  ]);
  assert.equal(tokens.at(-1), ids.endOfText);
  await model.dispose();
});
