import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { BatchingQueue, type BatchEntry } from './batching-queue.js';

interface Job {
  readonly name: string;
  readonly size: number;
}

/** A queue whose batches wait until released, recording what ran together. */
function recordingQueue(options: { concurrency?: number; depth?: number; maxBatch?: number } = {}) {
  const batches: string[][] = [];
  const releases: (() => void)[] = [];
  const queue = new BatchingQueue<Job, string>(
    {
      concurrency: options.concurrency ?? 1,
      depth: options.depth ?? 8,
      maxBatch: options.maxBatch ?? 4,
      batchKey: (job) => String(job.size),
    },
    async (batch: readonly BatchEntry<Job>[]) => {
      batches.push(batch.map((entry) => entry.request.name));
      await new Promise<void>((resolve) => releases.push(resolve));
      return batch.map((entry) =>
        entry.request.name === 'bad' ? new Error('bad row') : `${entry.request.name}@${batch.length}`,
      );
    },
  );
  const releaseNext = async () => {
    while (releases.length === 0) await new Promise((r) => setImmediate(r));
    releases.shift()!();
  };
  return { queue, batches, releaseNext };
}

test('a lone request runs at once, alone; those waiting meanwhile run together by key, oldest first', async () => {
  const { queue, batches, releaseNext } = recordingQueue({ maxBatch: 3 });
  const first = queue.run({ name: 'a', size: 64 });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(batches, [['a']], 'no waiting for company');
  const later = [
    queue.run({ name: 'b', size: 64 }),
    queue.run({ name: 'c', size: 128 }),
    queue.run({ name: 'd', size: 64 }),
    queue.run({ name: 'e', size: 64 }),
    queue.run({ name: 'f', size: 64 }),
  ];
  assert.equal(queue.depth, 5);
  await releaseNext();
  assert.equal(await first, 'a@1');
  await releaseNext();
  await releaseNext();
  await releaseNext();
  assert.deepEqual(await Promise.all(later), ['b@3', 'c@1', 'd@3', 'e@3', 'f@1']);
  // b's batch takes the next two of its key (d, e) past c; c is then the oldest.
  assert.deepEqual(batches, [['a'], ['b', 'd', 'e'], ['c'], ['f']]);
  assert.equal(queue.active, 0);
});

test('one entry answered with an Error rejects only that caller', async () => {
  const { queue, releaseNext } = recordingQueue();
  const hold = queue.run({ name: 'hold', size: 1 });
  const good = queue.run({ name: 'good', size: 1 });
  const bad = queue.run({ name: 'bad', size: 1 });
  await releaseNext();
  await hold;
  await releaseNext();
  assert.equal(await good, 'good@2');
  await assert.rejects(bad, /bad row/);
});

test('full: no_capacity with Retry-After; a waiting request that aborts leaves; a running one answers its abort at once', async () => {
  const { queue, batches, releaseNext } = recordingQueue({ depth: 1 });
  const running = new AbortController();
  const a = queue.run({ name: 'a', size: 1 }, running.signal);
  const waiting = new AbortController();
  const b = queue.run({ name: 'b', size: 1 }, waiting.signal);
  assert.equal(queue.isFull, true);
  await assert.rejects(
    queue.run({ name: 'c', size: 1 }),
    (error) => isSwitchboardError(error) && error.code === 'no_capacity' && error.retryAfterSeconds! >= 1,
  );
  waiting.abort(new Error('b went away'));
  await assert.rejects(b, /b went away/);
  assert.equal(queue.depth, 0);
  running.abort(new Error('a went away'));
  await assert.rejects(a, /a went away/);
  await releaseNext();
  const c = queue.run({ name: 'c', size: 1 });
  await releaseNext();
  assert.equal(await c, 'c@1');
  assert.deepEqual(batches, [['a'], ['c']], 'b never ran');
});

test('maxBatch 1 runs one at a time in arrival order', async () => {
  const { queue, batches, releaseNext } = recordingQueue({ maxBatch: 1 });
  const all = ['a', 'b', 'c'].map((name) => queue.run({ name, size: 1 }));
  for (let i = 0; i < 3; i++) await releaseNext();
  assert.deepEqual(await Promise.all(all), ['a@1', 'b@1', 'c@1']);
  assert.deepEqual(batches, [['a'], ['b'], ['c']]);
});

test('waiting requests are served by owner in turns, and a full queue refuses the heaviest owner rather than a newcomer', async () => {
  const { queue, batches, releaseNext } = recordingQueue({ maxBatch: 1, depth: 4 });
  const results: Promise<string>[] = [queue.run({ name: 'h0', size: 64 }, undefined, 'heavy')];
  await new Promise((r) => setImmediate(r));
  for (const name of ['h1', 'h2', 'h3', 'h4'])
    results.push(queue.run({ name, size: 64 }, undefined, 'heavy'));
  // Full (1 running, 4 waiting): the light key's request takes the place of heavy's newest.
  const light = queue.run({ name: 'l1', size: 64 }, undefined, 'light');
  const refused = await results[4]!.catch((error: unknown) => error);
  assert.ok(isSwitchboardError(refused) && refused.code === 'no_capacity', String(refused));
  assert.ok(refused.retryAfterSeconds !== undefined && refused.retryAfterSeconds >= 1);
  // Light's second evens the split (2 and 2); its third would leave heavy with fewer: refused.
  const light2 = queue.run({ name: 'l2', size: 64 }, undefined, 'light');
  await assert.rejects(results[3]!, { code: 'no_capacity' });
  await assert.rejects(queue.run({ name: 'l3', size: 64 }, undefined, 'light'), { code: 'no_capacity' });
  for (let i = 0; i < 5; i++) await releaseNext();
  assert.deepEqual([await light, await light2], ['l1@1', 'l2@1']);
  // After the running one, light's requests alternate with heavy's backlog.
  assert.deepEqual(batches, [['h0'], ['h1'], ['l1'], ['h2'], ['l2']]);
  await Promise.all(results.slice(0, 3));
});
