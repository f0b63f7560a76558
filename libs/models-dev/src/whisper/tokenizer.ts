// The tokenizer files of the tiny Whisper: the project's byte-level BPE text vocabulary (the same
// builder as the Llama's), followed by Whisper's special tokens and timestamps as added tokens.
// Encoding text frames it as Whisper's fast tokenizer does with no language or task set:
// `<|startoftranscript|> <|notimestamps|> … <|endoftext|>`.
import { learnMerges } from '../tokenizer/byte-level.js';
import { CORPUS } from '../tokenizer/corpus.js';
import {
  addedTokensDecoder,
  byteLevelTokenizerJson,
  byteLevelVocabulary,
  sequencePiece,
  specialPiece,
} from '../tokenizer/json.js';
import { whisperSpecialTokens, type WhisperTokenIds } from './tokens.js';

export interface WhisperTokenizer {
  readonly tokenizerJson: object;
  readonly tokenizerConfig: object;
  readonly ids: WhisperTokenIds;
  /** The text tokens (ids below `<|endoftext|>`), in id order. */
  readonly textTokens: readonly string[];
  readonly vocabSize: number;
  /** Id of the single-space token `Ġ`, which Whisper never starts a transcript with. */
  readonly spaceTokenId: number;
}

export interface WhisperTokenizerOptions {
  /** How many merges to learn (fewer when the corpus runs out of repeated pairs). */
  readonly merges?: number;
  readonly modelMaxLength: number;
}

export function buildWhisperTokenizer(options: WhisperTokenizerOptions): WhisperTokenizer {
  const merges = learnMerges(CORPUS, options.merges ?? 96);
  const text = byteLevelVocabulary(merges);
  const { ids, tokens: added } = whisperSpecialTokens(text.length);
  const tokens = [...text, ...added.map((t) => t.content)];
  const [eot, sot, noTimestamps] = ['<|endoftext|>', '<|startoftranscript|>', '<|notimestamps|>'];
  const prefix = [specialPiece(sot), specialPiece(noTimestamps)];
  const tokenizerJson = byteLevelTokenizerJson({
    tokens,
    merges,
    addedTokens: added,
    template: {
      single: [...prefix, sequencePiece('A'), specialPiece(eot)],
      pair: [...prefix, sequencePiece('A'), sequencePiece('B', 1), specialPiece(eot, 1)],
      specialTokens: [
        { content: sot, id: ids.startOfTranscript },
        { content: noTimestamps, id: ids.noTimestamps },
        { content: eot, id: ids.endOfText },
      ],
    },
  });
  const tokenizerConfig = {
    tokenizer_class: 'WhisperTokenizer',
    bos_token: eot,
    eos_token: eot,
    pad_token: eot,
    unk_token: eot,
    add_prefix_space: false,
    errors: 'replace',
    clean_up_tokenization_spaces: true,
    model_max_length: options.modelMaxLength,
    additional_special_tokens: added.filter((t) => t.special && t.content !== eot).map((t) => t.content),
    added_tokens_decoder: addedTokensDecoder(added),
  };
  const spaceTokenId = tokens.indexOf('Ġ');
  return {
    tokenizerJson,
    tokenizerConfig,
    ids,
    textTokens: text,
    vocabSize: tokens.length,
    spaceTokenId,
  };
}
