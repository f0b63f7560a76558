// Next-token choice from the last position's logits: temperature 0 is argmax (greedy,
// deterministic), otherwise softmax(logits / temperature) restricted to the top_p nucleus,
// drawn with the request's seeded PRNG.
import type { SeededRandom } from '@switchboard/models';

export interface SamplingParams {
  /** 0 = greedy. */
  readonly temperature: number;
  /** (0, 1]; 1 = the whole distribution. */
  readonly topP: number;
}

export function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/** Picks a token id. Ties and ordering are resolved by token id, so results never depend on sort stability. */
export function sampleToken(logits: ArrayLike<number>, params: SamplingParams, random: SeededRandom): number {
  if (params.temperature === 0) return argmax(logits);
  const max = logits[argmax(logits)]!;
  const weights = new Float64Array(logits.length);
  let total = 0;
  for (let i = 0; i < logits.length; i++) {
    const w = Math.exp((logits[i]! - max) / params.temperature);
    weights[i] = w;
    total += w;
  }

  let candidates: number[];
  if (params.topP < 1) {
    // The smallest set of most likely tokens whose probability reaches top_p (at least one).
    const order = Array.from({ length: logits.length }, (_, i) => i).sort(
      (a, b) => weights[b]! - weights[a]! || a - b,
    );
    candidates = [];
    let mass = 0;
    for (const id of order) {
      candidates.push(id);
      mass += weights[id]! / total;
      if (mass >= params.topP) break;
    }
  } else {
    candidates = Array.from({ length: logits.length }, (_, i) => i);
  }

  let kept = 0;
  for (const id of candidates) kept += weights[id]!;
  let target = random.next() * kept;
  for (const id of candidates) {
    target -= weights[id]!;
    if (target < 0) return id;
  }
  return candidates[candidates.length - 1]!; // rounding left a sliver: the last candidate owns it
}
