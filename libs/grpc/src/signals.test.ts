import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { shutdownOnSignals } from './signals.js';
import { silent } from './test-support.js';

test('shutdownOnSignals closes once however many signals come', async () => {
  const close = mock.fn(async () => {});
  const remove = shutdownOnSignals({ close }, { logger: silent, exit: false });
  try {
    process.emit('SIGTERM');
    process.emit('SIGINT');
    process.emit('SIGTERM');
    await new Promise((r) => setImmediate(r));
    assert.equal(close.mock.callCount(), 1);
  } finally {
    remove();
  }
});
