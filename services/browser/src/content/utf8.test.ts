import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capUtf8 } from './utf8.js';

test('short strings pass whole; long ones are cut on a character boundary', () => {
  assert.deepEqual(capUtf8('abc', 3), { value: 'abc', cut: false });
  assert.deepEqual(capUtf8('abcd', 3), { value: 'abc', cut: true });
  // é is 2 bytes, € 3, 😀 4 (a surrogate pair in JavaScript): never split.
  assert.deepEqual(capUtf8('éé', 3), { value: 'é', cut: true });
  assert.deepEqual(capUtf8('a€', 3), { value: 'a', cut: true });
  assert.deepEqual(capUtf8('😀😀', 7), { value: '😀', cut: true });
  assert.deepEqual(capUtf8('😀', 3), { value: '', cut: true });
  assert.deepEqual(capUtf8('😀😀', 8), { value: '😀😀', cut: false });
});
