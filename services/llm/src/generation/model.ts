// What the decoding loop needs from a language model, and nothing about how it runs: the
// adapter (adapters/causal-lm.ts) implements it over Transformers.js + ONNX Runtime.
import type { ChatTemplate } from '../chat/chat-template.js';

/**
 * A prompt being read into a fresh KV cache, alone: chunk by chunk, so a long prompt never holds
 * the running batch for long. Once read, it joins a DecodeBatch.
 */
export interface PrefillSequence {
  /** Tokens read so far. */
  readonly length: number;
  /** Reads the next prompt tokens; returns the next-token logits after the last of them. */
  feed(ids: readonly number[]): Promise<Float32Array>;
}

/**
 * The sequences decoding together: one KV cache row each, one model pass per step for all of
 * them. Rows are numbered 0…size−1 in the order they joined; removing one renumbers the rest.
 */
export interface DecodeBatch {
  readonly size: number;
  /** Cache positions the batch holds now: size × its longest row (shorter rows are padded). */
  readonly cachedTokens: number;
  /**
   * Reads whole prompts together in one pass (each padded to the longest) and adds them as the
   * last rows, in order; returns each one's next-token logits.
   */
  join(prompts: readonly (readonly number[])[]): Promise<Float32Array[]>;
  /** A prompt read in chunks joins as the last row. */
  add(sequence: PrefillSequence): void;
  remove(row: number): void;
  /** Appends `tokens[row]` to each row; returns each row's next-token logits, in row order. */
  step(tokens: readonly number[]): Promise<Float32Array[]>;
  /** Frees device-side cache tensors and empties the batch. */
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
  prefill(): PrefillSequence;
  /** An empty batch; a model has one decoding loop, which owns one batch. */
  openBatch(): DecodeBatch;
  dispose(): Promise<void>;
}
