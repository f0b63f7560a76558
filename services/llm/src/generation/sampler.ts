// Next-token choice from the last position's logits: temperature 0 is argmax (greedy,
// deterministic), otherwise softmax(logits / temperature) restricted to the top_p nucleus, drawn
// with the request's seeded PRNG by one uniform number per token.
//
// The draw is the inverse of the cumulative distribution: with top_p 1 over the tokens in id
// order, with top_p < 1 over the nucleus in order of decreasing probability (ties by id). That
// order is found without sorting the vocabulary: weights are grouped by how far they lie below
// the most likely one (token-weights.ts), whole groups are taken or skipped by their mass, and
// only the group where the nucleus ends, and the one the draw lands in, are sorted. The same seed
// gives the same token as summing and sorting every weight would, except where the draw falls
// within about 1e-12 of the edge between two tokens (the weights' own rounding).
import type { SeededRandom } from '@switchboard/models';
import { argmax } from './argmax.js';
import { BLOCK, TokenWeights } from './token-weights.js';

export { argmax };

/**
 * How far below the most likely token a nucleus is first looked for, in nats: the tokens beyond
 * hold under vocabulary × e^−16 (1.4% at 128k) of its weight, so only a top_p that near 1 looks
 * further.
 */
const LIKELY_NATS = 16;

export interface SamplingParams {
  /** 0 = greedy. */
  readonly temperature: number;
  /** (0, 1]; 1 = the whole distribution. */
  readonly topP: number;
}

// One decoding loop runs on this thread and samples one row at a time, so one scratch serves all.
const scratch = new TokenWeights();

/** Picks a token id. */
export function sampleToken(logits: ArrayLike<number>, params: SamplingParams, random: SeededRandom): number {
  if (params.temperature === 0) return argmax(logits);
  if (params.topP >= 1) return sampleAll(logits, params.temperature, random);
  return sampleNucleus(logits, params, random);
}

function sampleAll(logits: ArrayLike<number>, temperature: number, random: SeededRandom): number {
  scratch.compute(logits, temperature);
  if (!(scratch.total > 0)) return argmax(logits); // no finite logit: nothing to weigh
  const { weights, blockTotals } = scratch;
  let target = random.next() * scratch.total;
  for (let block = 0, start = 0; start < logits.length; block++, start += BLOCK) {
    const blockTotal = blockTotals[block]!;
    if (target >= blockTotal) {
      target -= blockTotal;
      continue;
    }
    const end = Math.min(logits.length, start + BLOCK);
    for (let id = start; id < end; id++) {
      target -= weights[id]!;
      if (target < 0) return id;
    }
  }
  // Rounding left a sliver: the last token that has weight owns it.
  let last = logits.length - 1;
  while (last > 0 && weights[last] === 0) last--;
  return last;
}

function sampleNucleus(logits: ArrayLike<number>, params: SamplingParams, random: SeededRandom): number {
  const { topP, temperature } = params;
  scratch.computeLikely(logits, temperature, LIKELY_NATS);
  if (!(scratch.total > 0)) return argmax(logits); // no finite logit: nothing to weigh
  let edge = nucleusEdge(topP);
  if (!edge) {
    // top_p so near 1 that the nucleus reaches past the likely region: every bucket, then.
    scratch.computeLikely(logits, temperature, Infinity);
    edge = nucleusEdge(topP) ?? lastBucket();
  }
  const { weights, bucketMass, total } = scratch;

  // The smallest set of most likely tokens whose probability reaches top_p (at least one): whole
  // buckets before the edge, then the edge bucket's tokens one by one.
  const edgeMembers = scratch.bucketMembers(edge.bucket);
  let taken = 0;
  let kept = edge.before;
  for (let probability = edge.before / total; taken < edgeMembers.length;) {
    const w = weights[edgeMembers[taken++]!]!;
    kept += w;
    probability += w / total;
    if (probability >= topP) break;
  }

  let target = random.next() * kept;
  for (let b = 0; b < edge.bucket; b++) {
    const mass = bucketMass[b]!;
    if (mass === 0) continue;
    if (target < mass) return drawWithin(scratch.bucketMembers(b), target);
    target -= mass;
  }
  return drawWithin(edgeMembers.subarray(0, taken), target);
}

interface NucleusEdge {
  /** The bucket where the nucleus's probability reaches top_p. */
  readonly bucket: number;
  /** The mass of the buckets before it. */
  readonly before: number;
}

function nucleusEdge(topP: number): NucleusEdge | undefined {
  const { bucketMass, total, likelyBuckets } = scratch;
  let before = 0;
  for (let bucket = 0; bucket < likelyBuckets; bucket++) {
    if ((before + bucketMass[bucket]!) / total >= topP) return { bucket, before };
    before += bucketMass[bucket]!;
  }
  return undefined;
}

/** Rounding kept top_p out of reach: the nucleus is every token that has weight. */
function lastBucket(): NucleusEdge {
  const { bucketMass, likelyBuckets } = scratch;
  let bucket = likelyBuckets - 1;
  while (bucket > 0 && bucketMass[bucket] === 0) bucket--;
  let before = 0;
  for (let b = 0; b < bucket; b++) before += bucketMass[b]!;
  return { bucket, before };
}

/** The token of `members` (in order) where `target` runs out; the last one owns any sliver. */
function drawWithin(members: Int32Array, target: number): number {
  const { weights } = scratch;
  for (const id of members) {
    target -= weights[id]!;
    if (target < 0) return id;
  }
  return members[members.length - 1]!;
}
