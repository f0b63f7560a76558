// The Hugging Face `tokenizers` JSON files for a tiny byte-level BPE tokenizer with Llama-style
// special tokens: `<s>` is prepended by a TemplateProcessing post-processor (as Llama 3 and
// SmolLM exports do), `</s>` ends generation, `<pad>` pads batches.
import { byteToChar, learnMerges } from './byte-level.js';
import { CORPUS } from './corpus.js';
import {
  addedTokensDecoder,
  byteLevelTokenizerJson,
  byteLevelVocabulary,
  sequencePiece,
  specialPiece,
} from './json.js';

export const SPECIAL_TOKENS = { pad: '<pad>', bos: '<s>', eos: '</s>' } as const;

export interface TinyTokenizer {
  /** Contents of `tokenizer.json`. */
  readonly tokenizerJson: object;
  /** Contents of `tokenizer_config.json`. */
  readonly tokenizerConfig: object;
  readonly vocabSize: number;
  readonly padTokenId: number;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
}

export interface TinyTokenizerOptions {
  /** How many merges to learn (fewer when the corpus runs out of repeated pairs). */
  readonly merges?: number;
  readonly modelMaxLength: number;
  /**
   * The exact vocabulary size, special tokens included, for real-sized vocabularies (32,000,
   * 128,256, …): the learned merges come first, then synthetic ones (see syntheticMerges) until
   * the size is reached. At least the learned vocabulary's size.
   */
  readonly vocabSize?: number;
}

export function buildTinyTokenizer(options: TinyTokenizerOptions): TinyTokenizer {
  const specials = [SPECIAL_TOKENS.pad, SPECIAL_TOKENS.bos, SPECIAL_TOKENS.eos];
  const learned = learnMerges(CORPUS, options.merges ?? 96);
  const merges =
    options.vocabSize === undefined
      ? learned
      : [...learned, ...syntheticMerges(learned, options.vocabSize - specials.length)];
  // Ids: specials 0–2, then the 256 byte characters in byte order, then one token per merge.
  // Two merges can make the same string ("a"+"bc", "ab"+"c"); it gets one id.
  const tokens = [...specials, ...byteLevelVocabulary(merges)];
  if (options.vocabSize !== undefined && tokens.length !== options.vocabSize) {
    throw new Error(`vocabSize ${options.vocabSize} is below the learned vocabulary's ${tokens.length}`);
  }
  const [padTokenId, bosTokenId, eosTokenId] = [0, 1, 2];
  const addedTokens = specials.map((content, id) => ({ id, content, special: true }));
  const bos = specialPiece(SPECIAL_TOKENS.bos);
  const tokenizerJson = byteLevelTokenizerJson({
    tokens,
    merges,
    addedTokens,
    template: {
      single: [bos, sequencePiece('A')],
      pair: [bos, sequencePiece('A'), bos, sequencePiece('B', 1)],
      specialTokens: [{ content: SPECIAL_TOKENS.bos, id: bosTokenId }],
    },
  });
  const tokenizerConfig = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: SPECIAL_TOKENS.bos,
    eos_token: SPECIAL_TOKENS.eos,
    pad_token: SPECIAL_TOKENS.pad,
    unk_token: null,
    add_bos_token: true,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: options.modelMaxLength,
    added_tokens_decoder: addedTokensDecoder(addedTokens),
  };
  return { tokenizerJson, tokenizerConfig, vocabSize: tokens.length, padTokenId, bosTokenId, eosTokenId };
}

/**
 * Merges that grow the text vocabulary (bytes + learned merges) to `textTokens` tokens, each
 * making a new token string from two existing ones, so the tokenizer stays a valid byte-level
 * BPE: first every pair of byte characters (two-character tokens), then two-character tokens
 * followed by a byte character (three characters), and so on, in a fixed order. Their ranks come
 * after the learned merges, so the learned ones still apply first. Linear in the merges made.
 */
function syntheticMerges(
  learned: readonly (readonly [string, string])[],
  textTokens: number,
): [string, string][] {
  const bytes = byteToChar();
  const known = new Set(byteLevelVocabulary(learned));
  const merges: [string, string][] = [];
  let lefts: readonly string[] = bytes;
  while (known.size < textTokens) {
    const made: string[] = [];
    for (const left of lefts) {
      for (const right of bytes) {
        const token = left + right;
        if (known.has(token)) continue;
        known.add(token);
        merges.push([left, right]);
        made.push(token);
        if (known.size === textTokens) return merges;
      }
    }
    lefts = made;
  }
  return merges;
}
