// Stop strings over streamed text. Text is released only once it can no longer become part of a
// stop string, so a stop string is never half-sent before we notice it; on a match the text
// ends right before it.

export interface StopResult {
  /** Text that is now safe to send. */
  readonly text: string;
  /** A stop string matched: generation ends, `text` is the last of it. */
  readonly stopped: boolean;
}

export class StopMatcher {
  private held = '';

  constructor(private readonly stops: readonly string[]) {}

  push(piece: string): StopResult {
    const buffer = this.held + piece;
    let earliest = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (earliest < 0 || at < earliest)) earliest = at;
    }
    if (earliest >= 0) {
      this.held = '';
      return { text: buffer.slice(0, earliest), stopped: true };
    }
    const keep = this.partialMatchLength(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false };
  }

  /** What was held back, at the end of generation (no stop string can complete any more). */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop string. */
  private partialMatchLength(text: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, text.length); n > longest; n--) {
        if (text.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
