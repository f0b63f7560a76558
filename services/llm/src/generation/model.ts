// What the generation loop needs from a language model, and nothing about how it runs: the
// adapter (adapters/causal-lm.ts) implements it over Transformers.js + ONNX Runtime.
import type { ChatTemplate } from '../chat/chat-template.js';

/** One sequence being generated, holding its KV cache between steps. */
export interface DecodeSequence {
  /** Runs the model over the tokens not yet seen; returns the next-token logits (vocab-sized). */
  logits(): Promise<ArrayLike<number>>;
  /** Appends the chosen token; the next `logits()` feeds only it, with the cache. */
  append(id: number): void;
  dispose(): Promise<void>;
}

export interface LanguageModel {
  readonly id: string;
  /** Prompt plus completion tokens may not exceed this. */
  readonly contextLength: number;
  /** The element type of the weights loaded ("fp32", "q8", …), for /models. */
  readonly dtype: string;
  readonly eosTokenIds: ReadonlySet<number>;
  /** The model's own chat template; undefined when its tokenizer config has none. */
  readonly chatTemplate: ChatTemplate | undefined;
  /**
   * Text → token ids. By default with the special tokens the model expects (BOS); a rendered chat
   * already holds the ones its template wrote, so it is encoded with `addSpecialTokens: false`.
   */
  encode(text: string, options?: { readonly addSpecialTokens?: boolean }): number[];
  /** Token ids → text, special tokens skipped, no clean-up that would rewrite earlier text. */
  decode(ids: readonly number[]): string;
  start(promptIds: readonly number[]): DecodeSequence;
  dispose(): Promise<void>;
}
