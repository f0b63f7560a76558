import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeOnce, startWithRollback } from './lifecycle.js';

test('a failed start-up undoes what it opened, newest first, and reports its own error', async () => {
  const undone: string[] = [];
  await assert.rejects(
    startWithRollback(async (onRollback) => {
      onRollback(() => undone.push('server'));
      onRollback(() => {
        undone.push('metrics');
        throw new Error('undo failed too');
      });
      throw new Error('broker unreachable');
    }),
    /broker unreachable/,
  );
  assert.deepEqual(undone, ['metrics', 'server']);
});

test('a start-up that succeeds undoes nothing', async () => {
  let undone = false;
  const value = await startWithRollback(async (onRollback) => {
    onRollback(() => (undone = true));
    return 42;
  });
  assert.equal(value, 42);
  assert.equal(undone, false);
});

test('closeOnce runs close once and lets every caller wait for it', async () => {
  let runs = 0;
  const close = closeOnce(async () => {
    runs += 1;
    await new Promise((r) => setTimeout(r, 5));
  });
  await Promise.all([close(), close()]);
  await close();
  assert.equal(runs, 1);
});
