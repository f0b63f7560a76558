// The Whisper tokenizer files in Transformers.js's WhisperTokenizer (no network): Whisper's special
// tokens in Whisper's order with the ids generation_config.json names, timestamps that are added
// but not special, text that round-trips, and ASR decoding that turns timestamp ids into seconds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { generationConfigJson } from './config.js';
import { buildWhisperTokenizer } from './tokenizer.js';
import { TIMESTAMP_COUNT, WHISPER_LANGUAGES, timestampToken } from './tokens.js';

const built = buildWhisperTokenizer({ modelMaxLength: 448 });
const { ids } = built;
const generation = generationConfigJson({ ids, spaceTokenId: built.spaceTokenId, maxLength: 448 }) as {
  decoder_start_token_id: number;
  lang_to_id: Record<string, number>;
  task_to_id: Record<string, number>;
  no_timestamps_token_id: number;
};

interface AsrTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(
    ids: number[],
    options?: { skip_special_tokens?: boolean; decode_with_timestamps?: boolean },
  ): string;
  timestamp_begin: number;
  all_special_ids: number[];
  _decode_asr(
    sequences: { tokens: bigint[]; stride?: number[] }[],
    options: { return_timestamps: boolean; time_precision: number; force_full_sequences?: boolean },
  ): [string, { chunks?: { text: string; timestamp: [number | null, number | null] }[] }];
}

async function loadTokenizer(): Promise<AsrTokenizer & { id(token: string): number | undefined }> {
  const root = await mkdtemp(join(tmpdir(), 'models-dev-whisper-tok-'));
  try {
    await mkdir(join(root, 'tiny'));
    await writeFile(join(root, 'tiny', 'tokenizer.json'), JSON.stringify(built.tokenizerJson));
    await writeFile(join(root, 'tiny', 'tokenizer_config.json'), JSON.stringify(built.tokenizerConfig));
    env.allowRemoteModels = false;
    env.localModelPath = root;
    const tokenizer = await AutoTokenizer.from_pretrained('tiny');
    assert.equal(tokenizer.constructor.name, 'WhisperTokenizer');
    const inner = (tokenizer as unknown as { _tokenizer: { token_to_id(t: string): number | undefined } })
      ._tokenizer;
    return Object.assign(tokenizer as unknown as AsrTokenizer, { id: (t: string) => inner.token_to_id(t) });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

test("Whisper's special tokens follow the text vocabulary in Whisper's order", () => {
  assert.equal(WHISPER_LANGUAGES.length, 99);
  assert.equal(new Set(WHISPER_LANGUAGES).size, 99);
  assert.equal(ids.endOfText, built.textTokens.length);
  assert.equal(ids.startOfTranscript, ids.endOfText + 1);
  assert.equal(ids.languages.en, ids.endOfText + 2);
  assert.equal(ids.languages.zh, ids.endOfText + 3);
  assert.equal(ids.languages.su, ids.endOfText + 100);
  assert.deepEqual(
    [ids.translate, ids.transcribe, ids.startOfLm, ids.startOfPrev, ids.noCaptions, ids.noTimestamps],
    [0, 1, 2, 3, 4, 5].map((i) => ids.languages.su + 1 + i),
  );
  assert.equal(ids.timestampBegin, ids.noTimestamps + 1);
  assert.equal(ids.end, ids.timestampBegin + TIMESTAMP_COUNT);
  assert.equal(built.vocabSize, ids.end);
  assert.deepEqual(
    [timestampToken(0), timestampToken(1), timestampToken(1500)],
    ['<|0.00|>', '<|0.02|>', '<|30.00|>'],
  );
});

test('Transformers.js maps the prompt and timestamp tokens to the ids generation_config.json names', async () => {
  const tokenizer = await loadTokenizer();
  assert.equal(tokenizer.id('<|startoftranscript|>'), generation.decoder_start_token_id);
  assert.equal(tokenizer.id('<|en|>'), generation.lang_to_id['<|en|>']);
  assert.equal(tokenizer.id('<|transcribe|>'), generation.task_to_id['transcribe']);
  assert.equal(tokenizer.id('<|translate|>'), generation.task_to_id['translate']);
  assert.equal(tokenizer.id('<|notimestamps|>'), generation.no_timestamps_token_id);
  assert.equal(tokenizer.id('<|0.00|>'), generation.no_timestamps_token_id + 1);
  assert.equal(tokenizer.id('<|30.00|>'), generation.no_timestamps_token_id + 1501);
  assert.equal(Object.keys(generation.lang_to_id).length, 99);
  for (const [token, id] of Object.entries(generation.lang_to_id))
    assert.equal(tokenizer.id(token), id, token);
  // Timestamps start right after the last special token, as Transformers.js computes them.
  assert.equal(tokenizer.timestamp_begin, ids.timestampBegin);
  assert.equal(Math.max(...tokenizer.all_special_ids), ids.noTimestamps);
});

test('text round-trips; encoding frames it as <|startoftranscript|> <|notimestamps|> … <|endoftext|>', async () => {
  const tokenizer = await loadTokenizer();
  for (const text of [' The model answers the question.', 'héllo wörld ✓ 日本', 'tabs\tand\nnewlines']) {
    const encoded = tokenizer.encode(text);
    assert.deepEqual(encoded.slice(0, 2), [ids.startOfTranscript, ids.noTimestamps]);
    assert.equal(encoded.at(-1), ids.endOfText);
    assert.ok(encoded.slice(2, -1).every((id) => id < ids.endOfText));
    assert.equal(tokenizer.decode(encoded, { skip_special_tokens: true }), text);
  }
  const words = tokenizer.encode(' the model', { add_special_tokens: false });
  assert.ok(words.length < ' the model'.length / 2, `merges are applied: ${words.join(' ')}`);
});

test('timestamp ids decode to times in seconds, in plain decoding and in ASR chunk decoding', async () => {
  const tokenizer = await loadTokenizer();
  const t = (seconds: number): number => ids.timestampBegin + Math.round(seconds / 0.02);
  const text = tokenizer.encode(' hello world', { add_special_tokens: false });
  const sequence = [
    ids.startOfTranscript,
    ids.languages.en,
    ids.transcribe,
    t(0),
    ...text,
    t(2.5),
    t(2.5),
    ...text,
    t(7.04),
  ];
  // decode_with_timestamps (4.3.1) throws when nothing follows a timestamp before the next one
  // or the end (it decodes the empty text in between), so it gets one segment ending in
  // <|endoftext|>, as generate returns them; the ASR decoding below handles whole transcripts.
  const segment = [
    ids.startOfTranscript,
    ids.languages.en,
    ids.transcribe,
    t(0),
    ...text,
    t(2.5),
    ids.endOfText,
  ];
  assert.equal(
    tokenizer.decode(segment, { decode_with_timestamps: true, skip_special_tokens: true }),
    '<|0.00|> hello world<|2.50|>',
  );
  const [full, { chunks }] = tokenizer._decode_asr([{ tokens: sequence.map(BigInt) }], {
    return_timestamps: true,
    time_precision: 0.02,
  });
  assert.equal(full, ' hello world hello world');
  assert.deepEqual(chunks, [
    { text: ' hello world', timestamp: [0, 2.5] },
    { text: ' hello world', timestamp: [2.5, 7.04] },
  ]);
});
