// Half-precision conversion against bit patterns from the IEEE 754 binary16 tables (numpy's
// np.float16(x).view(np.uint16) gives the same ones).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromFloat16Array, fromFloat16Bits, toFloat16Array, toFloat16Bits } from './float16.js';

test('known bit patterns both ways', () => {
  const table: [number, number][] = [
    [0, 0x0000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff], // the largest half
    [2 ** -14, 0x0400], // the smallest normal
    [2 ** -24, 0x0001], // the smallest subnormal
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
  ];
  for (const [value, bits] of table) {
    assert.equal(toFloat16Bits(value), bits, `${value} → 0x${bits.toString(16)}`);
    assert.equal(fromFloat16Bits(bits), value, `0x${bits.toString(16)} → ${value}`);
  }
  assert.ok(Number.isNaN(fromFloat16Bits(toFloat16Bits(NaN))));
  assert.equal(toFloat16Bits(-0), 0x8000);
});

test('rounding: to nearest, ties to even, overflow to Infinity, underflow to zero', () => {
  assert.equal(toFloat16Bits(0.1), 0x2e66);
  assert.equal(toFloat16Bits(1 + 2 ** -11), 0x3c00, 'tie between 1 and 1+2⁻¹⁰ goes to the even 1');
  assert.equal(toFloat16Bits(1 + 3 * 2 ** -11), 0x3c02, 'tie goes up to the even neighbour');
  assert.equal(toFloat16Bits(65520), 0x7c00);
  assert.equal(toFloat16Bits(2 ** -26), 0);
  assert.equal(toFloat16Bits(3 * 2 ** -25), 0x0002, 'subnormal tie to even');
  const values = Float32Array.of(-3.25, 0.1, 1000, 1e-5);
  const back = fromFloat16Array(toFloat16Array(values));
  values.forEach((v, i) => assert.ok(Math.abs(back[i]! - v) <= Math.abs(v) * 2 ** -11 + 2 ** -25, `${v}`));
});
