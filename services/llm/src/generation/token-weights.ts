// Softmax weights for a whole vocabulary without Math.exp: V8's Math.exp costs 15–40 ns here,
// which at 128k tokens is 2–5 ms per row, longer than a model pass of a small model. Each weight is
// exp(−s), s = (max − logit) / temperature, taken from a table of exp(−j/1024) times a cubic for
// the rest of the step (relative error below 1e-13 against Math.exp). Weights more than
// CUTOFF_NATS below the most likely token's are 0: each is under 4e-18 of it, so all of them
// together (at most 152k) move no probability by more than 1e-12.
import { argmax } from './argmax.js';

/** How far below the most likely token's weight a weight counts as 0, in nats (e^−40 ≈ 4e-18). */
export const CUTOFF_NATS = 40;
const STEPS_PER_NAT = 1024;
const STEP = 1 / STEPS_PER_NAT;
const STEPS = CUTOFF_NATS * STEPS_PER_NAT;
const EXP_TABLE = Float64Array.from({ length: STEPS + 1 }, (_, j) => Math.exp(-j * STEP));

/** exp(−steps / STEPS_PER_NAT), for 0 ≤ steps < STEPS. */
function expSteps(steps: number): number {
  const j = steps | 0;
  const f = (steps - j) * STEP;
  return EXP_TABLE[j]! * (1 - f * (1 - f * (0.5 - f * (1 / 6))));
}

/** Tokens per block of `blockTotals`: a draw subtracts whole blocks, then scans one. */
export const BLOCK = 256;

/**
 * Buckets per nat below the most likely token: every weight in bucket b is at least every weight
 * in bucket b + 1, so buckets order the likely tokens by weight without sorting them.
 */
const BUCKETS_PER_NAT = 64;
const BUCKET_SHIFT = Math.log2(STEPS_PER_NAT / BUCKETS_PER_NAT);

/** Scratch arrays reused for every row: sampling allocates nothing once they fit the vocabulary. */
export class TokenWeights {
  /** weights[id] = exp(−(max − logit[id]) / temperature), or 0 below the cutoff. */
  weights = new Float64Array(0);
  /** Sum of the weights of tokens [b·BLOCK, (b+1)·BLOCK); filled by `compute`. */
  blockTotals = new Float64Array(0);
  /** Sum of all weights. */
  total = 0;
  /** Sum of the weights in each bucket of the likely region; filled by `computeLikely`. */
  readonly bucketMass = new Float64Array(CUTOFF_NATS * BUCKETS_PER_NAT);
  /** Buckets in the likely region (`computeLikely`'s nats × BUCKETS_PER_NAT). */
  likelyBuckets = 0;

  /** The likely region's tokens, in id order, and each one's bucket. */
  private likely = new Int32Array(0);
  private likelyBucket = new Uint16Array(0);
  private likelyCount = 0;
  private members = new Int32Array(0);

  /** Every weight of `logits` at `temperature` (> 0), their total and each block's. */
  compute(logits: ArrayLike<number>, temperature: number): void {
    const n = logits.length;
    this.fit(n);
    const { weights, blockTotals } = this;
    const max = maxOf(logits);
    const scale = STEPS_PER_NAT / temperature;
    let total = 0;
    for (let start = 0, block = 0; start < n; start += BLOCK, block++) {
      const end = Math.min(n, start + BLOCK);
      let sum = 0;
      for (let i = start; i < end; i++) {
        const steps = (max - logits[i]!) * scale;
        const w = steps < STEPS ? expSteps(steps) : 0;
        weights[i] = w;
        sum += w;
      }
      blockTotals[block] = sum;
      total += sum;
    }
    this.total = total;
  }

  /**
   * Every weight and their total, and the tokens within `nats` of the most likely one (the only
   * ones a nucleus can hold unless top_p is within e^−nats · vocabulary of 1) by bucket.
   */
  computeLikely(logits: ArrayLike<number>, temperature: number, nats: number): void {
    const n = logits.length;
    this.fit(n);
    const { weights, bucketMass, likely, likelyBucket } = this;
    const max = maxOf(logits);
    const scale = STEPS_PER_NAT / temperature;
    const likelySteps = Math.min(nats, CUTOFF_NATS) * STEPS_PER_NAT;
    this.likelyBuckets = likelySteps >> BUCKET_SHIFT;
    bucketMass.fill(0, 0, this.likelyBuckets);
    let total = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      const steps = (max - logits[i]!) * scale;
      let w = 0;
      if (steps < STEPS) {
        w = expSteps(steps);
        if (steps < likelySteps) {
          const b = (steps | 0) >> BUCKET_SHIFT;
          likely[count] = i;
          likelyBucket[count++] = b;
          bucketMass[b]! += w;
        }
      }
      weights[i] = w;
      total += w;
    }
    this.total = total;
    this.likelyCount = count;
  }

  /**
   * The tokens of bucket b, in order of decreasing weight (ties by id): a view valid until the
   * next call.
   */
  bucketMembers(b: number): Int32Array {
    const { likely, likelyBucket, members, weights } = this;
    let count = 0;
    for (let k = 0; k < this.likelyCount; k++) if (likelyBucket[k] === b) members[count++] = likely[k]!;
    const sorted = members.subarray(0, count);
    if (count > 1) sorted.sort((x, y) => weights[y]! - weights[x]! || x - y);
    return sorted;
  }

  private fit(n: number): void {
    if (this.weights.length >= n) return;
    this.weights = new Float64Array(n);
    this.blockTotals = new Float64Array(Math.ceil(n / BLOCK));
    this.likely = new Int32Array(n);
    this.likelyBucket = new Uint16Array(n);
    this.members = new Int32Array(n);
  }
}

/** The largest logit. */
export function maxOf(logits: ArrayLike<number>): number {
  return logits[argmax(logits)]!;
}
