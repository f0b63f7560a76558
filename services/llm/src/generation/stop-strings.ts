// Stop strings over streamed text. Text is released only once it can no longer become part of a
// stop string, so a stop string is never half-sent before we notice it; on a match the text
// ends right before it.
//
// The stop strings form an Aho–Corasick automaton, built once per request. Its state after the
// text so far is the longest suffix of that text which starts some stop string: exactly the text
// that must be held back. So a push costs the length of the piece (plus, amortized, the failure
// links followed), however long the generation and the stop strings are.
import { StopAutomaton, type StopState } from './stop-automaton.js';

export interface StopResult {
  /** Text that is now safe to send. */
  readonly text: string;
  /** A stop string matched: generation ends, `text` is the last of it. */
  readonly stopped: boolean;
}

export class StopMatcher {
  private readonly automaton: StopAutomaton;
  /** Where the text so far leaves the automaton; its text is what is held back. */
  private state: StopState;

  constructor(stops: readonly string[]) {
    this.automaton = new StopAutomaton(stops);
    this.state = this.automaton.root;
  }

  push(piece: string): StopResult {
    const automaton = this.automaton;
    const held = automaton.text(this.state);
    // Positions count in the held text followed by the piece.
    let matchStart = automaton.hasEmptyStop ? 0 : -1;
    let state = this.state;
    for (let i = 0; i < piece.length; i++) {
      const at = held.length + i;
      // Past a match, read on only while a stop string begun before it could still complete
      // (stops "abcd" and "c" over "abcd" end the text before "abcd").
      if (matchStart >= 0 && at - automaton.depth(state) >= matchStart) break;
      state = automaton.next(state, piece.charCodeAt(i));
      const stop = automaton.longestStop(state);
      if (stop > 0 && (matchStart < 0 || at + 1 - stop < matchStart)) matchStart = at + 1 - stop;
    }
    if (matchStart >= 0) {
      this.state = automaton.root;
      return { text: prefixOf(held, piece, matchStart), stopped: true };
    }
    this.state = state;
    const release = held.length + piece.length - automaton.depth(state);
    return { text: prefixOf(held, piece, release), stopped: false };
  }

  /** What was held back, at the end of generation (no stop string can complete any more). */
  flush(): string {
    const rest = this.automaton.text(this.state);
    this.state = this.automaton.root;
    return rest;
  }
}

/** The first `length` characters of `held + piece`, without joining more than needed. */
function prefixOf(held: string, piece: string, length: number): string {
  return length <= held.length ? held.slice(0, length) : held + piece.slice(0, length - held.length);
}
