// The incremental decoder against the byte-level BPE tokenizer of the tiny model, and against
// the SentencePiece-style one of a real trained Llama.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { buildTinyLlama } from '@switchboard/models-dev';
import { needsPublishedModels, publishedModelPath } from '@switchboard/models-dev/published-models';
import { IncrementalDecoder, PROMPT_CONTEXT_TOKENS } from './text-decoder.js';

const root = await mkdtemp(join(tmpdir(), 'llm-decoder-'));
after(() => rm(root, { recursive: true, force: true }));
const { shape } = await buildTinyLlama(join(root, 'tiny'), { seed: 0 });
env.allowRemoteModels = false;
env.localModelPath = root;
const tokenizer = await AutoTokenizer.from_pretrained('tiny');
const decode = (ids: readonly number[]) =>
  ids.length === 0
    ? ''
    : tokenizer.decode([...ids], { skip_special_tokens: true, clean_up_tokenization_spaces: false });
const REPLACEMENT = '\uFFFD';

function stream(ids: number[]): string[] {
  const decoder = new IncrementalDecoder(decode);
  const pieces = ids.map((id) => decoder.push(id));
  pieces.push(decoder.flush());
  return pieces;
}

test('multi-byte characters split across tokens are emitted whole, once complete', () => {
  const text = 'naïve 東京 🙂 ok';
  const ids = tokenizer.encode(text, { add_special_tokens: false });
  // The tiny tokenizer has no merges for these characters: they are split into byte tokens.
  const split = ids.some((_, n) => decode(ids.slice(0, n + 1)).endsWith(REPLACEMENT));
  assert.ok(split, 'the test text splits a character across tokens');
  const pieces = stream(ids);
  assert.equal(pieces.join(''), text);
  for (const piece of pieces)
    assert.ok(!piece.includes(REPLACEMENT), `broken character in ${JSON.stringify(piece)}`);
  assert.ok(pieces.filter(Boolean).length > 5, 'text comes out piece by piece, not all at the end');
});

test('deltas concatenate to the full decode for arbitrary token sequences, U+FFFD only where real', () => {
  const size = shape.vocabSize;
  let state = 12345;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) % size;
  for (let round = 0; round < 50; round++) {
    const ids = Array.from({ length: 60 }, next);
    const pieces = stream(ids);
    const full = decode(ids);
    assert.equal(pieces.join(''), full);
    // A U+FFFD inside a delta is at a position where the final text has one too.
    let at = 0;
    for (const piece of pieces) {
      for (let i = 0; i < piece.length; i++)
        if (piece[i] === REPLACEMENT) assert.equal(full[at + i], REPLACEMENT);
      at += piece.length;
    }
  }
});

/** The decoder as it was first written, the reference: no cache, a window that never gives up. */
function referenceStream(
  decodeIds: (ids: readonly number[]) => string,
  ids: number[],
  context: number[] = [],
) {
  const all = [...context];
  let prefixOffset = 0;
  let readOffset = all.length;
  const pieces = ids.map((id) => {
    all.push(id);
    const prefix = decodeIds(all.slice(prefixOffset, readOffset));
    const text = decodeIds(all.slice(prefixOffset));
    if (text.length <= prefix.length || text.endsWith(REPLACEMENT) || !text.startsWith(prefix)) return '';
    [prefixOffset, readOffset] = [readOffset, all.length];
    return text.slice(prefix.length);
  });
  pieces.push(
    decodeIds(all.slice(prefixOffset)).slice(decodeIds(all.slice(prefixOffset, readOffset)).length),
  );
  return pieces;
}

/** A decode function that counts its calls and the ids it is given, per push. */
function counted(decodeIds: (ids: readonly number[]) => string) {
  const counts = { calls: 0, maxCalls: 0, maxIds: 0 };
  const wrapped = (ids: readonly number[]) => {
    counts.calls++;
    counts.maxIds = Math.max(counts.maxIds, ids.length);
    return decodeIds(ids);
  };
  const push = (decoder: IncrementalDecoder, id: number) => {
    counts.calls = 0;
    const piece = decoder.push(id);
    counts.maxCalls = Math.max(counts.maxCalls, counts.calls);
    return piece;
  };
  return { counts, wrapped, push };
}

test('real text streams in exactly the pieces of the reference decoder', () => {
  for (const text of ['naïve 東京 🙂 ok', 'Hello, world! '.repeat(20), 'ab€\n\n€€ 🙂🙂 x']) {
    const ids = tokenizer.encode(text, { add_special_tokens: false });
    assert.deepEqual(stream(ids), referenceStream(decode, ids));
  }
});

test('a long run of tokens that never decodes to stable text keeps the window small', () => {
  // The bytes of é, 東 and 🙂: the tiny tokenizer has one token per byte for them.
  const bytes = tokenizer.encode('é東🙂', { add_special_tokens: false });
  assert.equal(bytes.length, 9);
  const continuationBytes = [1, 3, 4, 6, 7, 8].map((n) => bytes[n]!);
  let state = 7;
  // The high bits of the generator: its low bits repeat with short periods.
  const next = (choices: number[]) =>
    choices[Math.floor(((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * choices.length)]!;
  const runs = [
    // Continuation bytes alone never form a character: the text always ends in U+FFFD.
    Array.from({ length: 10_000 }, () => next(continuationBytes)),
    // All of the bytes: characters form now and then, between invalid bytes.
    Array.from({ length: 10_000 }, () => next(bytes)),
  ];
  for (const ids of runs) {
    const { counts, wrapped, push } = counted(decode);
    const decoder = new IncrementalDecoder(wrapped);
    const pieces = ids.map((id) => push(decoder, id));
    pieces.push(decoder.flush());
    assert.equal(pieces.join(''), decode(ids));
    assert.ok(counts.maxCalls <= 3, `${counts.maxCalls} decode calls for one token`);
    // The waiting tokens, and the prefix before them: each a handful, whatever the run's length.
    assert.ok(counts.maxIds <= 24, `${counts.maxIds} tokens decoded at once`);
    assert.ok(pieces.filter(Boolean).length > 1000, 'text comes out as it goes, not all at the end');
  }
});

test('tokens that decode to nothing (skipped special tokens) do not grow the window', () => {
  const words = tokenizer.encode('Hello there, world', { add_special_tokens: false });
  const ids = [...words.slice(0, 2), ...Array<number>(1000).fill(1), ...words.slice(2)];
  assert.equal(decode([1]), '', 'the token is skipped when decoding');
  const { counts, wrapped, push } = counted(decode);
  const decoder = new IncrementalDecoder(wrapped);
  const pieces = ids.map((id) => push(decoder, id));
  pieces.push(decoder.flush());
  assert.equal(pieces.join(''), referenceStream(decode, ids).join(''));
  assert.ok(counts.maxIds <= 16, `${counts.maxIds} tokens decoded at once`);
});

test('most tokens of real text cost one decode call', () => {
  const ids = tokenizer.encode('the cat and the dog and the bird. '.repeat(20), {
    add_special_tokens: false,
  });
  const { counts, wrapped } = counted(decode);
  const decoder = new IncrementalDecoder(wrapped);
  for (const id of ids) decoder.push(id);
  assert.ok(counts.calls < ids.length * 1.2, `${counts.calls} decode calls for ${ids.length} tokens`);
});

test('an incomplete character at the end is held back, then flushed as U+FFFD', () => {
  const ids = tokenizer.encode('ab€', { add_special_tokens: false });
  const decoder = new IncrementalDecoder(decode);
  const pieces = ids.slice(0, -1).map((id) => decoder.push(id));
  assert.equal(pieces.join(''), 'ab', 'the first two bytes of € are not emitted');
  assert.equal(decoder.flush(), REPLACEMENT, 'at the end of generation the broken character is real output');
});

// The SentencePiece-style tokenizer of a real trained Llama (stories260K, from the published model
// files beside the checkout): `▁` for spaces, a decoder that strips the leading one, byte fallback
// for what its 512-token vocabulary lacks. The tests below skip, naming the folder, without it.
const needsStories = { skip: needsPublishedModels('llm', 'stories260K') };
env.localModelPath = publishedModelPath('llm');
const sentencePiece =
  needsStories.skip === false ? await AutoTokenizer.from_pretrained('stories260K') : undefined;
const sp = () => {
  assert.ok(sentencePiece, 'the stories260K tokenizer is loaded');
  return sentencePiece;
};
const decodeSp = (ids: readonly number[]) =>
  ids.length === 0
    ? ''
    : sp().decode([...ids], { skip_special_tokens: true, clean_up_tokenization_spaces: false });

/** The token ids of `prompt` (with BOS) and of what follows it when the two are encoded as one. */
function split(prompt: string, rest: string): [number[], number[]] {
  const promptIds = sp().encode(prompt);
  const all = sp().encode(prompt + rest);
  assert.deepEqual(all.slice(0, promptIds.length), promptIds);
  return [promptIds, all.slice(promptIds.length)];
}

test('byte fallback: characters outside the vocabulary stream whole, never as U+FFFD', needsStories, () => {
  const text = 'Lily saw naïve 東京 🙂 ok';
  const ids = sp().encode(text, { add_special_tokens: false });
  assert.ok(
    ids.some((_, n) => decodeSp(ids.slice(0, n + 1)).endsWith(REPLACEMENT)),
    'the text is split into byte tokens',
  );
  const decoder = new IncrementalDecoder(decodeSp);
  const pieces = ids.map((id) => decoder.push(id));
  pieces.push(decoder.flush());
  for (const piece of pieces) assert.ok(!piece.includes(REPLACEMENT), `broken character in ${piece}`);
  assert.equal(pieces.join(''), decodeSp(ids));
  assert.ok(pieces.includes('🙂'), 'the emoji comes out as one piece once its 4 bytes are in');
});

test(
  'SentencePiece ▁: with prompt context, the first word of the completion keeps its space, once',
  needsStories,
  () => {
    const [prompt, completion] = split('Once upon a', ' time, there was');
    // Decoded alone, the completion loses the space its first ▁ stands for.
    assert.equal(decodeSp(completion), 'time, there was');
    const decoder = new IncrementalDecoder(decodeSp, prompt.slice(-PROMPT_CONTEXT_TOKENS));
    const pieces = completion.map((id) => decoder.push(id));
    pieces.push(decoder.flush());
    assert.deepEqual(pieces.filter(Boolean), [' time', ',', ' there', ' was']);
  },
);

test(
  'SentencePiece: the same pieces as the reference decoder, even after skipped tokens',
  needsStories,
  () => {
    const [prompt, completion] = split('Once upon a', ' time, there was a naïve 🙂 girl.');
    const context = prompt.slice(-PROMPT_CONTEXT_TOKENS);
    const decoder = new IncrementalDecoder(decodeSp, context);
    const pieces = completion.map((id) => decoder.push(id));
    pieces.push(decoder.flush());
    assert.deepEqual(pieces, referenceStream(decodeSp, completion, context));
    // A run of BOS tokens (skipped when decoding) before a word (▁there): its space stays.
    const withRun = [
      ...completion.slice(0, 2),
      ...Array<number>(50).fill(sp().bos_token_id ?? 1),
      ...completion.slice(2),
    ];
    const second = new IncrementalDecoder(decodeSp, context);
    const text = withRun.map((id) => second.push(id)).join('') + second.flush();
    assert.equal(text, referenceStream(decodeSp, withRun, context).join(''));
  },
);

test(
  'prompt context ending inside a byte-fallback character emits nothing of the prompt',
  needsStories,
  () => {
    const [prompt, completion] = split('Lily saw 🙂', ' and 東');
    // Fewer context tokens than the emoji's bytes: the window starts inside the character.
    const decoder = new IncrementalDecoder(decodeSp, prompt.slice(-2));
    const pieces = completion.map((id) => decoder.push(id));
    pieces.push(decoder.flush());
    assert.equal(pieces.join(''), ' and 東');
    for (const piece of pieces) assert.ok(!piece.includes(REPLACEMENT));
  },
);
