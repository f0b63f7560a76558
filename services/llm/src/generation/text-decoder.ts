// Token ids → text, incrementally, never emitting a broken character. A byte-level tokenizer
// can split one UTF-8 character over several tokens; decoding the tokens so far then ends in
// U+FFFD until the rest arrives. Like text-generation-inference, we decode a small window
// twice (without and with the new tokens) and emit the difference only when it does not end in
// U+FFFD; the window restarts after every emitted piece, so each step costs O(window), not O(n).
// Held-back text comes out at the end (flush), where a real U+FFFD from the model stays.

export type Decode = (ids: readonly number[]) => string;

const REPLACEMENT = '\uFFFD';

export class IncrementalDecoder {
  private readonly ids: number[] = [];
  private prefixOffset = 0;
  private readOffset = 0;

  constructor(private readonly decode: Decode) {}

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

  get tokenCount(): number {
    return this.ids.length;
  }
}
