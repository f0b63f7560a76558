import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepFreeze } from './freeze.js';

test('deepFreeze freezes nested objects and arrays in place, cycles included', () => {
  const value: { list: { n: number }[]; self?: unknown } = { list: [{ n: 1 }] };
  value.self = value;
  assert.equal(deepFreeze(value), value);
  assert.ok(Object.isFrozen(value));
  assert.ok(Object.isFrozen(value.list));
  assert.ok(Object.isFrozen(value.list[0]));
  assert.equal(deepFreeze(null), null);
  assert.equal(deepFreeze(3), 3);
});
