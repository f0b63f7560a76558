// The Hugging Face `tokenizers` JSON files for a tiny byte-level BPE tokenizer with Llama-style
// special tokens: `<s>` is prepended by a TemplateProcessing post-processor (as Llama 3 and
// SmolLM exports do), `</s>` ends generation, `<pad>` pads batches.
import { byteToChar, learnMerges } from './byte-level.js';
import { CORPUS } from './corpus.js';

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
}

export function buildTinyTokenizer(options: TinyTokenizerOptions): TinyTokenizer {
  const specials = [SPECIAL_TOKENS.pad, SPECIAL_TOKENS.bos, SPECIAL_TOKENS.eos];
  const merges = learnMerges(CORPUS, options.merges ?? 96);
  // Ids: specials 0–2, then the 256 byte characters in byte order, then one token per merge.
  // Two merges can make the same string ("a"+"bc", "ab"+"c"); it gets one id.
  const tokens = [...new Set([...specials, ...byteToChar(), ...merges.map(([a, b]) => a + b)])];
  const vocab = Object.fromEntries(tokens.map((t, id) => [t, id]));
  const [padTokenId, bosTokenId, eosTokenId] = [0, 1, 2];

  const addedTokens = specials.map((content, id) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
  const bos = { SpecialToken: { id: SPECIAL_TOKENS.bos, type_id: 0 } };
  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
    post_processor: {
      type: 'TemplateProcessing',
      single: [bos, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [bos, { Sequence: { id: 'A', type_id: 0 } }, bos, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: {
        [SPECIAL_TOKENS.bos]: { id: SPECIAL_TOKENS.bos, ids: [bosTokenId], tokens: [SPECIAL_TOKENS.bos] },
      },
    },
    decoder: { type: 'ByteLevel', ...byteLevel },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
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
    added_tokens_decoder: Object.fromEntries(addedTokens.map(({ id, ...rest }) => [String(id), rest])),
  };
  return { tokenizerJson, tokenizerConfig, vocabSize: tokens.length, padTokenId, bosTokenId, eosTokenId };
}
