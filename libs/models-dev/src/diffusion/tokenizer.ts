// The tokenizer/ folder of the tiny pipeline, as a CLIPTokenizer has it: tokenizer.json (what
// Transformers.js loads), tokenizer_config.json, vocab.json, merges.txt, special_tokens_map.json.
//
// CLIP's BPE is byte-level with an end-of-word suffix: text is NFC-normalised, whitespace runs
// become one space, everything is lowercased, words/digits/punctuation are split apart (spaces
// dropped), and the last symbol of each word carries `</w>`. Merges come from the project's
// shared learner (learned without the suffix); each learned merge (a, b) becomes two CLIP merges,
// (a, b) inside a word and (a, b</w>) at its end, so a word splits exactly as the learner would
// split it, its last token marked. `<|startoftext|>` and `<|endoftext|>` take the last two ids, as
// in CLIP, so the EOS position is the argmax of the ids (where the text encoder pools).
import { byteToChar, learnMerges } from '../tokenizer/byte-level.js';
import { CORPUS } from '../tokenizer/corpus.js';
import {
  addedTokensDecoder,
  byteLevelTokenizerJson,
  sequencePiece,
  specialPiece,
} from '../tokenizer/json.js';
import type { ClipTokenIds } from './config.js';
import { PROMPT_CORPUS } from './prompt-corpus.js';

export const CLIP_SPECIAL_TOKENS = { bos: '<|startoftext|>', eos: '<|endoftext|>' } as const;
const END_OF_WORD = '</w>';

export interface ClipTokenizer {
  /** File contents by name inside tokenizer/. */
  readonly files: ReadonlyMap<string, string>;
  readonly vocabSize: number;
  readonly ids: ClipTokenIds;
}

export interface ClipTokenizerOptions {
  /** Merges to learn (the corpora run out of repeated pairs sooner) before dropping those CLIP never uses. */
  readonly merges?: number;
  readonly modelMaxLength: number;
}

/**
 * Merges for CLIP's words. The shared learner splits GPT-2 style, where a word takes the space
 * before it (" cat"); CLIP drops spaces. Words one per line give the learner bare words (a lone
 * newline is a pre-token of its own, never merged), so it learns CLIP's pieces; any merge with a
 * whitespace byte could never apply after CLIP's split and is left out.
 */
function clipMerges(count: number): [string, string][] {
  const table = byteToChar();
  const whitespace = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20].map((b) => table[b]));
  const usable = (s: string): boolean => [...s].every((ch) => !whitespace.has(ch));
  const words = `${CORPUS} ${PROMPT_CORPUS}`.toLowerCase().trim().split(/\s+/);
  const learned = learnMerges(words.join('\n'), count);
  return learned
    .filter(([a, b]) => usable(a) && usable(b))
    .flatMap(([a, b]): [string, string][] => [
      [a, b],
      [a, b + END_OF_WORD],
    ]);
}

// CLIP's pre-tokenizer pattern: contractions, letter runs, single digits, punctuation runs.
const CLIP_SPLIT = "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+";

function tokenizerJson(tokens: readonly string[], merges: [string, string][], ids: ClipTokenIds): object {
  const addedTokens = [
    { id: ids.bos, content: CLIP_SPECIAL_TOKENS.bos, special: true },
    { id: ids.eos, content: CLIP_SPECIAL_TOKENS.eos, special: true },
  ];
  // The shared builder gives the byte-level skeleton; CLIP replaces its text handling.
  const base = byteLevelTokenizerJson({
    tokens,
    merges,
    addedTokens,
    template: {
      single: [
        specialPiece(CLIP_SPECIAL_TOKENS.bos),
        sequencePiece('A'),
        specialPiece(CLIP_SPECIAL_TOKENS.eos),
      ],
      pair: [],
      specialTokens: [],
    },
  }) as { model: object };
  return {
    ...base,
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'NFC' },
        { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
        { type: 'Lowercase' },
      ],
    },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: CLIP_SPLIT }, behavior: 'Removed', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    // <|startoftext|> A <|endoftext|>, and for pairs A and B each closed, as RoBERTa frames them.
    post_processor: {
      type: 'RobertaProcessing',
      sep: [CLIP_SPECIAL_TOKENS.eos, ids.eos],
      cls: [CLIP_SPECIAL_TOKENS.bos, ids.bos],
      trim_offsets: false,
      add_prefix_space: false,
    },
    model: {
      ...base.model,
      unk_token: CLIP_SPECIAL_TOKENS.eos,
      continuing_subword_prefix: '',
      end_of_word_suffix: END_OF_WORD,
    },
  };
}

const specialTokenEntry = (content: string): object => ({
  content,
  lstrip: false,
  normalized: true,
  rstrip: false,
  single_word: false,
});

export function buildClipTokenizer(options: ClipTokenizerOptions): ClipTokenizer {
  const merges = clipMerges(options.merges ?? 256);
  const bytes = byteToChar();
  // Ids: the 256 byte characters, the same with `</w>`, one token per merge, then the specials.
  const text = [
    ...new Set([...bytes, ...bytes.map((c) => c + END_OF_WORD), ...merges.map(([a, b]) => a + b)]),
  ];
  const ids: ClipTokenIds = { bos: text.length, eos: text.length + 1, pad: text.length + 1 };
  const tokens = [...text, CLIP_SPECIAL_TOKENS.bos, CLIP_SPECIAL_TOKENS.eos];
  const { bos, eos } = CLIP_SPECIAL_TOKENS;
  const config = {
    tokenizer_class: 'CLIPTokenizer',
    bos_token: bos,
    eos_token: eos,
    pad_token: eos,
    unk_token: eos,
    do_lower_case: true,
    add_prefix_space: false,
    errors: 'replace',
    clean_up_tokenization_spaces: true,
    model_max_length: options.modelMaxLength,
    added_tokens_decoder: addedTokensDecoder([
      { id: ids.bos, content: bos, special: true },
      { id: ids.eos, content: eos, special: true },
    ]),
  };
  const specialTokensMap = {
    bos_token: specialTokenEntry(bos),
    eos_token: specialTokenEntry(eos),
    pad_token: eos,
    unk_token: specialTokenEntry(eos),
  };
  const vocab = Object.fromEntries(tokens.map((t, id) => [t, id]));
  const json = (value: object): string => `${JSON.stringify(value, null, 2)}\n`;
  const files = new Map<string, string>([
    ['tokenizer.json', json(tokenizerJson(tokens, merges, ids))],
    ['tokenizer_config.json', json(config)],
    ['special_tokens_map.json', json(specialTokensMap)],
    ['vocab.json', json(vocab)],
    ['merges.txt', `#version: 0.2\n${merges.map(([a, b]) => `${a} ${b}\n`).join('')}`],
  ]);
  return { files, vocabSize: tokens.length, ids };
}
