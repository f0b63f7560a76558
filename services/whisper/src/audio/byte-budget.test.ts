import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteBudget, KeyedByteBudget } from './byte-budget.js';

test('takes bytes while they fit, refuses past the limit, fits again once bytes are given back', () => {
  const seen: number[] = [];
  const budget = new ByteBudget(100, (used) => seen.push(used));
  assert.equal(budget.tryTake(60), true);
  assert.equal(budget.tryTake(41), false, 'a refusal takes nothing');
  assert.equal(budget.tryTake(40), true);
  assert.equal(budget.used, 100);
  assert.equal(budget.tryTake(1), false);
  budget.give(60);
  assert.equal(budget.tryTake(50), true);
  assert.deepEqual(seen, [60, 100, 40, 90]);
});

test('KeyedByteBudget: each key has the limit to itself; a key that gave all back keeps no entry', () => {
  const budget = new KeyedByteBudget(100);
  assert.equal(budget.tryTake('a', 80), true);
  assert.equal(budget.tryTake('a', 21), false, 'past its own limit');
  assert.equal(budget.tryTake('b', 100), true, 'another key is not affected');
  assert.equal(budget.usedBy('a'), 80);
  budget.give('a', 80);
  assert.equal(budget.usedBy('a'), 0);
  assert.equal(budget.tryTake('a', 100), true);
});
