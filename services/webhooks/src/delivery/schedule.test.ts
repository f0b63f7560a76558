import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetrySchedule } from '@switchboard/webhooks';
import { MAX_RETRY_AFTER_MS, nextAttemptAt, retryAfterMs } from './schedule.js';

const schedule = parseRetrySchedule('5s,5m,30m');
const now = new Date('2026-03-01T12:00:00.000Z');
const after = (date: Date | null) => (date === null ? null : date.getTime() - now.getTime());

test('the n-th failure waits the n-th entry of the schedule, jittered by at most 20 %', () => {
  assert.equal(after(nextAttemptAt(schedule, 1, now, null, () => 0.5)), 5_000);
  assert.equal(after(nextAttemptAt(schedule, 2, now, null, () => 0)), 0.8 * 300_000);
  assert.equal(after(nextAttemptAt(schedule, 3, now, null, () => 1)), 1.2 * 1_800_000);
  for (let i = 0; i < 200; i++) {
    const wait = after(nextAttemptAt(schedule, 1, now))!;
    assert.ok(wait >= 4_000 && wait <= 6_000, `${wait}`);
  }
});

test('after the last entry there is no next attempt: the delivery fails', () => {
  assert.equal(nextAttemptAt(schedule, 4, now), null);
  assert.equal(nextAttemptAt([], 1, now), null);
});

test('Retry-After asking for longer is honoured; asking for less changes nothing', () => {
  assert.equal(after(nextAttemptAt(schedule, 1, now, '60', () => 0.5)), 60_000);
  assert.equal(after(nextAttemptAt(schedule, 1, now, '1', () => 0.5)), 5_000);
  const date = new Date(now.getTime() + 3_600_000).toUTCString();
  assert.equal(after(nextAttemptAt(schedule, 1, now, date, () => 0.5)), 3_600_000);
});

test('Retry-After is read as seconds or an HTTP date, capped at a day, and ignored when unreadable', () => {
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs(' 0 ', now), 0);
  assert.equal(retryAfterMs('Sun, 01 Mar 2026 12:00:30 GMT', now), 30_000);
  assert.equal(retryAfterMs('Sat, 28 Feb 2026 12:00:00 GMT', now), 0, 'a date in the past');
  assert.equal(retryAfterMs(String(7 * 86_400), now), MAX_RETRY_AFTER_MS);
  assert.equal(retryAfterMs('soon', now), null);
  assert.equal(retryAfterMs('-5', now), null);
  assert.equal(retryAfterMs('1.5', now), null);
  assert.equal(retryAfterMs(null, now), null);
  // A schedule that is used up stays used up, whatever the endpoint asks.
  assert.equal(nextAttemptAt(schedule, 4, now, '10'), null);
});
