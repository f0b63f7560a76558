import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judge } from './deliver.js';
import type { HttpAttemptResult } from './http-attempt.js';

const schedule = [5_000, 60_000];
const now = new Date('2026-03-01T12:00:00.000Z');
const answer = (status: number, retryAfter: string | null = null): HttpAttemptResult => ({
  kind: 'response',
  status,
  ms: 12,
  body: '',
  retryAfter,
  error: null,
});

test('only a 2xx succeeds', () => {
  for (const status of [200, 204, 299]) {
    const j = judge({ attempts: 0 }, answer(status), schedule, now);
    assert.deepEqual([j.ok, j.nextAttemptAt, j.error, j.result], [true, null, null, '2xx']);
  }
  for (const [status, label] of [
    [301, '3xx'],
    [302, '3xx'],
    [400, '4xx'],
    [500, '5xx'],
  ] as const) {
    const j = judge({ attempts: 0 }, answer(status), schedule, now);
    assert.equal(j.ok, false);
    assert.equal(j.result, label);
    assert.ok(j.nextAttemptAt && j.nextAttemptAt > now);
  }
  assert.match(
    judge({ attempts: 0 }, answer(302), schedule, now).error ?? '',
    /Redirect not followed \(HTTP 302\)/,
  );
});

test('410 fails the delivery at once and asks for the endpoint to be disabled', () => {
  const j = judge({ attempts: 0 }, answer(410), schedule, now);
  assert.deepEqual([j.ok, j.gone, j.nextAttemptAt], [false, true, null]);
});

test('the schedule counts the attempts made before, and ends in failure', () => {
  assert.ok(judge({ attempts: 1 }, answer(500), schedule, now).nextAttemptAt);
  assert.equal(judge({ attempts: 2 }, answer(500), schedule, now).nextAttemptAt, null);
});

test('timeouts, refusals and errors are failures with their own labels and the reason', () => {
  for (const kind of ['timeout', 'refused', 'error'] as const) {
    const j = judge(
      { attempts: 0 },
      { kind, status: null, ms: 1, body: null, retryAfter: null, error: `it was ${kind}` },
      schedule,
      now,
    );
    assert.deepEqual([j.ok, j.result, j.error], [false, kind, `it was ${kind}`]);
  }
});
