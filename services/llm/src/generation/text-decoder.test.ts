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
