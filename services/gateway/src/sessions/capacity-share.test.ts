import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countsAsWaiting, fairShare, shareAllows } from './capacity-share.js';

test('the fair share is the share of the capacity live now, rounded down, and at least one', () => {
  assert.equal(fairShare(10, 0.5), 5);
  assert.equal(fairShare(4, 0.5), 2);
  assert.equal(fairShare(5, 0.5), 2, 'never above share × capacity');
  assert.equal(fairShare(3, 0.1), 1, 'every key may hold one browser');
  assert.equal(fairShare(10, 0.3), 3, 'no float error: 0.3 × 10 is 3, not 2');
  assert.equal(fairShare(40, 0.5), 20, 'it grows as the workers scale out');
  assert.equal(fairShare(10, 1), 10);
});

test('with nobody waiting a key grows past its share, up to its tier limit (checked elsewhere)', () => {
  assert.ok(shareAllows({ capacity: 10, held: 8, waitingKeys: 0 }, 0.5));
  assert.ok(shareAllows({ capacity: 4, held: 3, waitingKeys: 0 }, 0.5));
});

test('while another key waits, a key at or above its share gets no more; one below it does', () => {
  // The cluster of ten: a basic key's two, an enterprise key at five, someone turned away.
  assert.ok(!shareAllows({ capacity: 10, held: 5, waitingKeys: 1 }, 0.5));
  assert.ok(!shareAllows({ capacity: 10, held: 8, waitingKeys: 1 }, 0.5), 'what it took before stays');
  assert.ok(shareAllows({ capacity: 10, held: 4, waitingKeys: 1 }, 0.5), 'up to its share');
  assert.ok(shareAllows({ capacity: 10, held: 0, waitingKeys: 3 }, 0.5));
  // Four browsers: A holds two of them, C is waiting.
  assert.ok(!shareAllows({ capacity: 4, held: 2, waitingKeys: 1 }, 0.5));
  assert.ok(shareAllows({ capacity: 4, held: 1, waitingKeys: 1 }, 0.5));
});

test('a share of 1 lets a key hold the whole cluster, waiting keys or not', () => {
  assert.ok(shareAllows({ capacity: 4, held: 3, waitingKeys: 2 }, 1));
});

test('before any worker has announced itself there is nothing to share', () => {
  assert.ok(shareAllows({ capacity: 0, held: 7, waitingKeys: 2 }, 0.5));
});

test('only keys refused below their share count as waiting', () => {
  assert.ok(countsAsWaiting({ capacity: 10, held: 0 }, 0.5));
  assert.ok(countsAsWaiting({ capacity: 10, held: 4 }, 0.5));
  assert.ok(!countsAsWaiting({ capacity: 10, held: 5 }, 0.5), 'it holds its share already');
  assert.ok(!countsAsWaiting({ capacity: 4, held: 2 }, 0.5));
});
