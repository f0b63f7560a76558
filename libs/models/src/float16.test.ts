// Half precision conversion: exact values survive, others round to nearest even, and the edges
// (overflow, subnormals, signed zero, NaN) behave as IEEE 754 says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromFloat16Array, fromFloat16Bits, toFloat16Array, toFloat16Bits } from './float16.js';

test('representable values round-trip exactly, with the known bit patterns', () => {
  const cases: [number, number][] = [
    [0, 0x0000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff], // largest finite half
    [2 ** -14, 0x0400], // smallest normal
    [2 ** -24, 0x0001], // smallest subnormal
  ];
  for (const [value, bits] of cases) {
    assert.equal(toFloat16Bits(value), bits, `${value}`);
    assert.equal(fromFloat16Bits(bits), value);
  }
  assert.equal(toFloat16Bits(-0), 0x8000);
});

test('rounding to nearest even, overflow to infinity, underflow to zero, NaN stays NaN', () => {
  assert.equal(fromFloat16Bits(toFloat16Bits(1 + 2 ** -11)), 1, 'a tie rounds to the even 1');
  assert.equal(fromFloat16Bits(toFloat16Bits(1 + 3 * 2 ** -11)), 1 + 2 ** -9, 'a tie rounds to even upwards');
  assert.equal(fromFloat16Bits(toFloat16Bits(70000)), Infinity);
  assert.equal(fromFloat16Bits(toFloat16Bits(2 ** -26)), 0);
  assert.ok(Number.isNaN(fromFloat16Bits(toFloat16Bits(NaN))));
  const values = Float32Array.of(0.1, -3.14159, 1000.5, 1e-5);
  const back = fromFloat16Array(toFloat16Array(values));
  values.forEach((v, i) => assert.ok(Math.abs(back[i]! - v) <= Math.abs(v) * 2 ** -11 + 2 ** -25, `${v}`));
});
