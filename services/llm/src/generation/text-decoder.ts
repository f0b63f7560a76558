// Token ids → text, incrementally, never emitting a broken character. A byte-level tokenizer
// can split one UTF-8 character over several tokens; decoding the tokens so far then ends in
// U+FFFD until the rest arrives. Like text-generation-inference, we decode a small window
// twice (without and with the new tokens) and emit the difference only when it does not end in
// U+FFFD; the window restarts after every emitted piece, so each step costs O(window), not O(n).
// Held-back text comes out at the end (flush), where a real U+FFFD from the model stays.
// The window starts inside the prompt: SentencePiece decoders strip the space of a leading `▁`
// from whatever they decode, so decoding the completion on its own would lose the space of its
// first word ("Once upon a" + "▁time" → "time"); with prompt tokens in front, the strip falls on
// the prompt and the completion keeps its space, exactly once.

export type Decode = (ids: readonly number[]) => string;

const REPLACEMENT = '\uFFFD';

export class IncrementalDecoder {
  private readonly ids: number[];
  private prefixOffset = 0;
  private readOffset: number;

  /** `context`: the last few prompt tokens (never emitted; see PROMPT_CONTEXT_TOKENS). */
  constructor(
    private readonly decode: Decode,
    context: readonly number[] = [],
  ) {
    this.ids = [...context];
    this.readOffset = context.length;
  }

  /** Adds one token; returns the text that became stable (often '', sometimes several characters). */
  push(id: number): string {
    this.ids.push(id);
    const prefix = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const text = this.decode(this.ids.slice(this.prefixOffset));
    if (text.length > prefix.length && !text.endsWith(REPLACEMENT) && text.startsWith(prefix)) {
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
      return text.slice(prefix.length);
    }
    return '';
  }

  /** Everything not yet emitted, at the end of generation. */
  flush(): string {
    const prefix = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const text = this.decode(this.ids.slice(this.prefixOffset));
    this.prefixOffset = this.readOffset = this.ids.length;
    return text.slice(prefix.length);
  }
}

/**
 * Prompt tokens the decoder starts from: enough to hold a whole character split into byte
 * tokens (UTF-8 has at most 4 bytes) plus the token before it, as text-generation-inference does.
 */
export const PROMPT_CONTEXT_TOKENS = 5;
