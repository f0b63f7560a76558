// IEEE half precision ⇄ float32, for exports whose inputs and outputs are float16 (fp16 diffusers
// exports, TensorRT-era SVD exports; models-dev writes fp16 weights with it). Node 20 has no Float16Array; onnxruntime-node takes and gives the raw bits
// as a Uint16Array. Conversion rounds to nearest even, overflows to ±Infinity, keeps subnormals.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0); // Infinity or NaN
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // too large: Infinity
  if (e <= 0) {
    if (e < -10) return sign; // below the smallest subnormal: signed zero
    mantissa |= 0x800000; // the implicit leading 1, then shift into the subnormal range
    const shift = 14 - e;
    const half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (half + (rest > midpoint || (rest === midpoint && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // Rounding up may carry into the exponent, which is the right result (up to Infinity).
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

export function toFloat16Array(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = toFloat16Bits(values[i]!);
  return out;
}

export function fromFloat16Array(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = fromFloat16Bits(bits[i]!);
  return out;
}
