import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryCreationRace } from './creation-race.js';

const overlap = () =>
  Object.assign(new Error('subjects overlap with an existing stream'), { api_error: { err_code: 10065 } });

test('a creation that loses the race to another replica is run again until it passes', async () => {
  let calls = 0;
  const result = await retryCreationRace(async () => {
    calls += 1;
    if (calls < 4) throw overlap();
    return 'opened';
  });
  assert.deepEqual([result, calls], ['opened', 4]);
});

test('any other failure ends it at once, and the race is given up after the last pass', async () => {
  let calls = 0;
  const other = Object.assign(new Error('permissions violation'), { api_error: { err_code: 10003 } });
  await assert.rejects(
    retryCreationRace(async () => {
      calls += 1;
      throw other;
    }),
    other,
  );
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(
    retryCreationRace(async () => {
      calls += 1;
      throw overlap();
    }, 3),
    /subjects overlap/,
  );
  assert.equal(calls, 3);
});
