// Retry and poll timing without a server: doubling with a cap and bounded jitter, Retry-After in
// both of its forms, poll gaps that grow and stop growing, and a sleep that a cancel ends at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetryAfter, pollDelayMs, retryDelayMs, sleep } from './backoff.js';

const policy = { baseMs: 100, maxMs: 1000 };

test('retry delays double from the base, stay within [nominal/2, nominal], and stop at the cap', () => {
  const low = () => 0;
  const high = () => 1;
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy, high)),
    [100, 200, 400, 800, 1000, 1000],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy, low)),
    [50, 100, 200, 400, 500, 500],
  );
  for (let i = 0; i < 100; i++) {
    const delay = retryDelayMs(2, policy);
    assert.ok(delay >= 200 && delay <= 400, String(delay));
  }
});

test('Retry-After is read as seconds or as an HTTP date; junk and absence give undefined', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('3', now), 3000);
  assert.equal(parseRetryAfter(' 0 ', now), 0);
  assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.equal(parseRetryAfter('-1', now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
  assert.equal(parseRetryAfter(undefined, now), undefined);
});

test('poll gaps start at the interval, grow 1.5x, and stop at 10x the interval (10 s at most)', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => pollDelayMs(n, 100)),
    [100, 150, 225, 338],
  );
  assert.equal(pollDelayMs(50, 100), 1000);
  assert.equal(pollDelayMs(50, 2000), 10_000);
  // An interval above the 10 s ceiling is kept as given, never shortened.
  assert.equal(pollDelayMs(0, 15_000), 15_000);
  assert.equal(pollDelayMs(9, 15_000), 15_000);
});

test('sleep resolves after its time, and rejects with the abort reason at once on cancel', async () => {
  const started = Date.now();
  await sleep(30, new AbortController().signal);
  assert.ok(Date.now() - started >= 25);

  const controller = new AbortController();
  const reason = new Error('canceled');
  const waiting = sleep(60_000, controller.signal);
  const abortedAt = Date.now();
  controller.abort(reason);
  await assert.rejects(waiting, (error) => error === reason);
  assert.ok(Date.now() - abortedAt < 100);

  await assert.rejects(sleep(10, controller.signal), (error) => error === reason);
});
