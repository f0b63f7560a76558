import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { MemoryWatch } from './memory-watch.js';

const logger = createLogger({ service: 'memory-watch-test', level: 'silent' });

test('reports the browsers over the limit, once per round, and skips rounds with none', async () => {
  const over: string[] = [];
  let asked = 0;
  const watch = new MemoryWatch({
    // This test process uses more than 1 MB and less than 64 GB.
    limitBytes: 2 ** 20,
    browsers: () => {
      asked++;
      return asked === 1 ? [] : [{ sessionId: 'big', pid: process.pid }];
    },
    onOverLimit: (sessionId) => over.push(sessionId),
    logger,
  });
  await watch.round();
  assert.equal(over.length, 0);
  await watch.round();
  assert.deepEqual(over, ['big']);

  const roomy = new MemoryWatch({
    limitBytes: 64 * 2 ** 30,
    browsers: () => [{ sessionId: 'small', pid: process.pid }],
    onOverLimit: (sessionId) => over.push(sessionId),
    logger,
  });
  await roomy.round();
  assert.deepEqual(over, ['big']);
});
