// IEEE 754 half precision ↔ single precision, for fp16 exports: the denoising loop works in
// float32, and float16 inputs and outputs are converted at the session's edges. Conversion to
// half rounds to nearest, ties to even; out-of-range values become ±Infinity, as numpy's astype.

const single = new Float32Array(1);
const singleBits = new Uint32Array(single.buffer);

/** The float16 bit pattern nearest to `value`. */
export function halfBits(value: number): number {
  single[0] = value;
  const bits = singleBits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit 1 into place, then round.
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = sign | (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to Infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return half;
}

/** The value of a float16 bit pattern. */
export function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

export const toFloat16 = (values: ArrayLike<number>): Uint16Array => Uint16Array.from(values, halfBits);
export const fromFloat16 = (bits: ArrayLike<number>): Float32Array => Float32Array.from(bits, halfValue);
