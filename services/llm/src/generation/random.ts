// A seeded PRNG for sampling: the same seed gives the same stream of numbers on every machine,
// which is what makes "same seed → same text" hold. SplitMix64 over BigInt: one draw per token,
// so its cost does not matter next to a model step.
import { randomBytes } from 'node:crypto';

const MASK64 = (1n << 64n) - 1n;

export class SeededRandom {
  private state: bigint;

  constructor(seed: bigint) {
    this.state = BigInt.asUintN(64, seed);
  }

  /** A seed for requests that gave none: different every time. */
  static randomSeed(): bigint {
    return randomBytes(8).readBigInt64BE();
  }

  /** Uniform in [0, 1), from the top 53 bits. */
  next(): number {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  }
}
