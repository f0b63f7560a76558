// An Aho–Corasick automaton over stop strings, by UTF-16 code unit (as String.indexOf compares).
// A state stands for the longest suffix of the text read so far that begins some stop string.
//
// Stop strings are few but may be long (the API bounds their number, not their length), so the
// trie is kept in flat typed arrays, a few integers per character of stop string. A node has at
// most one child per stop string that passes through it, and only the nodes where stop strings
// part have more than one, so each node holds its first child inline and the rare others sit in
// a small map.

/** A state of the automaton; the root, 0, stands for no held text. */
export type StopState = number;

const ROOT = 0;
const NONE = -1;

export class StopAutomaton {
  readonly root: StopState = ROOT;
  /** The empty stop string matches before any text. */
  readonly hasEmptyStop: boolean;
  private nodes = 1;
  /** Per node: the length of its text, which is the first `depth` characters of `source`. */
  private readonly depths: Int32Array;
  private readonly sources: Int32Array;
  /** Per node: the node of the longest proper suffix of its text that also begins a stop. */
  private readonly fallbacks: Int32Array;
  /** Per node: the length of the longest stop string its text ends with; 0 for none. */
  private readonly longestStops: Int32Array;
  private readonly firstCodes: Int32Array;
  private readonly firstChildren: Int32Array;
  /** Children after the first, by node × 2^16 + code unit. */
  private readonly otherChildren = new Map<number, number>();

  constructor(private readonly stops: readonly string[]) {
    this.hasEmptyStop = stops.includes('');
    const capacity = 1 + stops.reduce((sum, stop) => sum + stop.length, 0);
    this.depths = new Int32Array(capacity);
    this.sources = new Int32Array(capacity);
    this.fallbacks = new Int32Array(capacity).fill(NONE);
    this.longestStops = new Int32Array(capacity);
    this.firstCodes = new Int32Array(capacity).fill(NONE);
    this.firstChildren = new Int32Array(capacity);
    stops.forEach((stop, source) => this.insert(stop, source));
    this.linkFallbacks();
  }

  /** The state after reading one more code unit. */
  next(state: StopState, code: number): StopState {
    for (let node = state; ; node = this.fallbacks[node]!) {
      const child = this.child(node, code);
      if (child !== NONE) return child;
      if (node === ROOT) return ROOT;
    }
  }

  /** The held text a state stands for. */
  text(state: StopState): string {
    if (state === ROOT) return '';
    return this.stops[this.sources[state]!]!.slice(0, this.depths[state]);
  }

  depth(state: StopState): number {
    return this.depths[state]!;
  }

  /** The length of the longest stop string the text read so far ends with; 0 for none. */
  longestStop(state: StopState): number {
    return this.longestStops[state]!;
  }

  private child(node: number, code: number): number {
    if (this.firstCodes[node] === code) return this.firstChildren[node]!;
    if (this.otherChildren.size === 0) return NONE;
    return this.otherChildren.get(node * 0x10000 + code) ?? NONE;
  }

  private insert(stop: string, source: number): void {
    let node = ROOT;
    for (let i = 0; i < stop.length; i++) {
      const code = stop.charCodeAt(i);
      let child = this.child(node, code);
      if (child === NONE) {
        child = this.nodes++;
        this.depths[child] = i + 1;
        this.sources[child] = source;
        if (this.firstCodes[node] === NONE) {
          this.firstCodes[node] = code;
          this.firstChildren[node] = child;
        } else this.otherChildren.set(node * 0x10000 + code, child);
      }
      node = child;
    }
    if (node !== ROOT) this.longestStops[node] = stop.length;
  }

  /**
   * Depth by depth, so the fallbacks of all shallower nodes are known when a node's is computed:
   * it is where its parent's fallback goes on the same character.
   */
  private linkFallbacks(): void {
    this.fallbacks[ROOT] = ROOT;
    const parents = this.stops.map(() => ROOT);
    const longest = Math.max(0, ...this.stops.map((stop) => stop.length));
    for (let depth = 1; depth <= longest; depth++) {
      this.stops.forEach((stop, s) => {
        if (stop.length < depth) return;
        const parent = parents[s]!;
        const code = stop.charCodeAt(depth - 1);
        const node = this.child(parent, code);
        parents[s] = node;
        if (this.fallbacks[node] !== NONE) return; // shared with an earlier stop string
        const fallback = depth === 1 ? ROOT : this.next(this.fallbacks[parent]!, code);
        this.fallbacks[node] = fallback;
        if (this.longestStops[node] === 0) this.longestStops[node] = this.longestStops[fallback]!;
      });
    }
  }
}
