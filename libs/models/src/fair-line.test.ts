import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FairLine } from './fair-line.js';

function lineOf(...entries: [owner: string, name: string][]): FairLine<string> {
  const line = new FairLine<string>();
  for (const [owner, name] of entries) line.push(owner, name);
  return line;
}

test('owners take turns, each in its own arrival order', () => {
  const line = lineOf(['a', 'a1'], ['a', 'a2'], ['a', 'a3'], ['b', 'b1'], ['c', 'c1'], ['b', 'b2']);
  const order: string[] = [];
  for (let next = line.shift(); next; next = line.shift()) order.push(next);
  assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  assert.equal(line.length, 0);
});

test('an owner that arrives late is served after the current turn, not after the whole backlog', () => {
  const line = lineOf(['heavy', 'h1'], ['heavy', 'h2'], ['heavy', 'h3'], ['heavy', 'h4']);
  assert.equal(line.shift(), 'h1');
  line.push('light', 'l1');
  assert.equal(line.shift(), 'h2');
  assert.equal(line.shift(), 'l1');
});

test('take forms a batch in turns among the entries that match, and peek does not move anything', () => {
  const line = lineOf(['a', 'a64'], ['a', 'a64b'], ['a', 'a128'], ['b', 'b64'], ['b', 'b128']);
  assert.equal(line.peek(), 'a64');
  const batch = line.take(3, (name) => name.includes('64'));
  assert.deepEqual(batch, ['a64', 'b64', 'a64b']);
  assert.equal(line.length, 2);
  assert.equal(line.countOf('a'), 1);
});

test('a full line makes room by evicting the newest entry of the owner with the most waiting', () => {
  const line = lineOf(['heavy', 'h1'], ['heavy', 'h2'], ['heavy', 'h3'], ['light', 'l1']);
  assert.equal(line.evictFor('new'), 'h3');
  assert.equal(line.countOf('heavy'), 2);
  // heavy has 2, "light" would have 2 with its next: an even split is not worth breaking.
  assert.equal(line.evictFor('light'), undefined);
  // The heaviest owner never evicts itself.
  assert.equal(line.evictFor('heavy'), undefined);
  assert.equal(line.length, 3);
});

test('removeWhere and drain take entries out and keep the count true', () => {
  const line = lineOf(['a', 'x1'], ['b', 'y1'], ['a', 'x2']);
  assert.equal(
    line.removeWhere((name) => name.startsWith('x')),
    2,
  );
  assert.equal(line.length, 1);
  assert.equal(line.remove('b', 'y1'), true);
  assert.equal(line.remove('b', 'y1'), false);
  line.push('c', 'z');
  assert.deepEqual(line.drain(), ['z']);
  assert.equal(line.length, 0);
  assert.equal(line.peek(), undefined);
});
