// Token ids → text, incrementally, never emitting a broken character. A byte-level tokenizer
// can split one UTF-8 character over several tokens; decoding the tokens so far then ends in
// U+FFFD until the rest arrives. Like text-generation-inference, we decode a small window
// twice (without and with the new tokens) and emit the difference only when it does not end in
// U+FFFD; the window restarts after every emitted piece, so each step costs O(window), not O(n).
// The text without the new tokens (the prefix) only changes when the window restarts, so it is
// decoded then, once, not on every token; mostly it is the single token emitted last, whose text
// is remembered, so a token that recurs costs one decode call.
// Held-back text comes out at the end (flush), where a real U+FFFD from the model stays.
// The window starts inside the prompt: SentencePiece decoders strip the space of a leading `▁`
// from whatever they decode, so decoding the completion on its own would lose the space of its
// first word ("Once upon a" + "▁time" → "time"); with prompt tokens in front, the strip falls on
// the prompt and the completion keeps its space, exactly once.
//
// A model can also produce a long run of tokens that never decodes to stable text (invalid bytes,
// each leaving the text ending in U+FFFD; special tokens that decode to nothing). The window must
// not grow with it, or every token re-decodes the whole run. A UTF-8 character has at most 4
// bytes and every byte token carries one, so the last few tokens are all that a character still
// being completed can span: once more tokens than that wait, everything before the last few is
// settled (a U+FFFD there is real) and comes out, and the window moves on.

export type Decode = (ids: readonly number[]) => string;

const REPLACEMENT = '\uFFFD';

/** Tokens that may still complete a character: at most 3 more bytes, and one more to spare. */
const UNSETTLED_TOKENS = 4;
/** Tokens waiting unemitted before the settled part of them is emitted anyway. */
const MAX_WAITING_TOKENS = 2 * UNSETTLED_TOKENS;

export class IncrementalDecoder {
  /** The prefix tokens, then the tokens not yet emitted. */
  private window: number[];
  /** Where the tokens not yet emitted start in `window`. */
  private readOffset: number;
  /** The decoded prefix tokens; decoded when first needed after the window moves. */
  private prefix: string | undefined;
  /** Single tokens decoded as the prefix so far. */
  private readonly tokenText = new Map<number, string>();

  /** `context`: the last few prompt tokens (never emitted; see PROMPT_CONTEXT_TOKENS). */
  constructor(
    private readonly decode: Decode,
    context: readonly number[] = [],
  ) {
    this.window = [...context];
    this.readOffset = context.length;
  }

  /** Adds one token; returns the text that became stable (often '', sometimes several characters). */
  push(id: number): string {
    this.window.push(id);
    const prefix = this.prefixText();
    const text = this.decode(this.window);
    if (text.length > prefix.length && !text.endsWith(REPLACEMENT) && text.startsWith(prefix))
      return this.emit(text, this.window.length);
    if (this.window.length - this.readOffset > MAX_WAITING_TOKENS) return this.emitSettled(text);
    return '';
  }

  /** Everything not yet emitted, at the end of generation. */
  flush(): string {
    const text = this.decode(this.window).slice(this.prefixText().length);
    this.window = [];
    this.readOffset = 0;
    this.prefix = '';
    return text;
  }

  private prefixText(): string {
    this.prefix ??= this.decodePrefix();
    return this.prefix;
  }

  /** Usually the one token emitted last; tokens recur, so their text is remembered. */
  private decodePrefix(): string {
    if (this.readOffset !== 1) return this.decode(this.window.slice(0, this.readOffset));
    const id = this.window[0]!;
    let text = this.tokenText.get(id);
    if (text === undefined) {
      text = this.decode([id]);
      this.tokenText.set(id, text);
    }
    return text;
  }

  /** Emits `text` (the decoded window up to `end`) past the prefix; the window restarts there. */
  private emit(text: string, end: number): string {
    const piece = text.slice(this.prefixText().length);
    this.window = this.window.slice(this.readOffset);
    this.readOffset = end - this.readOffset;
    this.prefix = undefined;
    return piece;
  }

  /**
   * Too many tokens wait: all but the last few are settled. Emits their text, or drops them from
   * the window when they decode to nothing (as special tokens do), so the window stays small.
   */
  private emitSettled(text: string): string {
    const end = this.window.length - UNSETTLED_TOKENS;
    const settled = this.decode(this.window.slice(0, end));
    const prefix = this.prefixText();
    // Not settled after all while the later tokens still change it (a character they complete).
    if (!text.startsWith(settled) || !settled.startsWith(prefix)) return '';
    if (settled.length > prefix.length) return this.emit(settled, end);
    this.window.splice(this.readOffset, end - this.readOffset);
    return '';
  }
}

/**
 * Prompt tokens the decoder starts from: enough to hold a whole character split into byte
 * tokens (UTF-8 has at most 4 bytes) plus the token before it, as text-generation-inference does.
 */
export const PROMPT_CONTEXT_TOKENS = 5;
