// A seeded PRNG for inference: the same seed gives the same stream of numbers on every machine,
// which is what makes "same seed → same text" (llm sampling) and "same seed → same image"
// (diffusion's initial latents) hold. SplitMix64 over BigInt, and Gaussians by Box–Muller with
// V8's own fdlibm-based Math.log/cos/sin, so no result depends on the host's libm.
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

  /** `count` standard normal samples. */
  normals(count: number): Float32Array {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i += 2) {
      // 1 − u is in (0, 1], so the logarithm stays finite.
      const radius = Math.sqrt(-2 * Math.log(1 - this.next()));
      const angle = 2 * Math.PI * this.next();
      out[i] = radius * Math.cos(angle);
      if (i + 1 < count) out[i + 1] = radius * Math.sin(angle);
    }
    return out;
  }
}
