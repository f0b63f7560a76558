// The Hugging Face `tokenizers` JSON shape of a byte-level BPE tokenizer, shared by every model
// family here: each family chooses where its special tokens go (Llama-style before the text
// vocabulary, Whisper-style after it) and how inputs are framed (its post-processor).
import { byteToChar } from './byte-level.js';

export interface AddedToken {
  readonly id: number;
  readonly content: string;
  /** Special tokens are dropped by `skip_special_tokens`; Whisper's timestamps are not special. */
  readonly special: boolean;
}

/** A TemplateProcessing step: a special token or the input sequence A/B. */
export type TemplatePiece =
  | { readonly SpecialToken: { readonly id: string; readonly type_id: number } }
  | { readonly Sequence: { readonly id: 'A' | 'B'; readonly type_id: number } };

export const specialPiece = (id: string, typeId = 0): TemplatePiece => ({
  SpecialToken: { id, type_id: typeId },
});
export const sequencePiece = (id: 'A' | 'B', typeId = 0): TemplatePiece => ({
  Sequence: { id, type_id: typeId },
});

/** The text vocabulary: the 256 byte characters in byte order, then one token per merge (deduplicated). */
export function byteLevelVocabulary(merges: readonly (readonly [string, string])[]): string[] {
  return [...new Set([...byteToChar(), ...merges.map(([a, b]) => a + b)])];
}

function addedTokenJson(t: AddedToken): object {
  return {
    id: t.id,
    content: t.content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: t.special,
  };
}

/** `added_tokens_decoder` of tokenizer_config.json: the added tokens keyed by id. */
export function addedTokensDecoder(tokens: readonly AddedToken[]): Record<string, object> {
  return Object.fromEntries(
    tokens.map((t) => {
      const { id, ...rest } = addedTokenJson(t) as { id: number };
      return [String(id), rest];
    }),
  );
}

export interface TemplateProcessing {
  readonly single: readonly TemplatePiece[];
  readonly pair: readonly TemplatePiece[];
  /** The special tokens the templates use, with their ids. */
  readonly specialTokens: readonly { readonly content: string; readonly id: number }[];
}

export interface ByteLevelTokenizerSpec {
  /** Every token in id order (the id of a token is its index). */
  readonly tokens: readonly string[];
  readonly merges: readonly (readonly [string, string])[];
  readonly addedTokens: readonly AddedToken[];
  readonly template: TemplateProcessing;
}

/** Contents of `tokenizer.json` for a byte-level BPE model (GPT-2 style pre-tokenizer and decoder). */
export function byteLevelTokenizerJson(spec: ByteLevelTokenizerSpec): object {
  const vocab = Object.fromEntries(spec.tokens.map((t, id) => [t, id]));
  const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: spec.addedTokens.map(addedTokenJson),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
    post_processor: {
      type: 'TemplateProcessing',
      single: spec.template.single,
      pair: spec.template.pair,
      special_tokens: Object.fromEntries(
        spec.template.specialTokens.map(({ content, id }) => [
          content,
          { id: content, ids: [id], tokens: [content] },
        ]),
      ),
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
      merges: spec.merges,
    },
  };
}
