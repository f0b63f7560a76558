// Seeded randomness for weights: the same seed must give byte-identical model files, so nothing
// here may touch Math.random or the clock. mulberry32 is a tiny 32-bit generator with good
// enough statistics for random weights; it uses only integer ops (Math.imul), so the stream is
// the same on every platform. Gaussians use Box–Muller (Math.log/cos/sqrt; V8 computes these
// with its own fdlibm port, so results do not depend on the host's libm).

export class Random {
  private state: number;
  private spare: number | undefined;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new Error(`seed must be an integer, got ${seed}`);
    this.state = seed >>> 0;
  }

  /** Next 32-bit unsigned integer (mulberry32). */
  nextUint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in (0, 1): never 0, so log() in Box–Muller stays finite. */
  uniform(): number {
    return (this.nextUint32() + 0.5) / 4294967296;
  }

  /** Standard normal sample. */
  normal(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(this.uniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** `count` normal samples with standard deviation `std`, as float32. */
  normals(count: number, std: number): Float32Array {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.normal() * std;
    return out;
  }
}
