// What the generation loop needs from a language model, and nothing about how it runs: the
// adapter (adapters/causal-lm.ts) implements it over Transformers.js + ONNX Runtime.

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
  /** Prompt → token ids, with the special tokens the model expects (BOS). */
  encode(text: string): number[];
  /** Token ids → text, special tokens skipped, no clean-up that would rewrite earlier text. */
  decode(ids: readonly number[]): string;
  start(promptIds: readonly number[]): DecodeSequence;
  dispose(): Promise<void>;
}
