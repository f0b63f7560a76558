import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { WorkQueue } from './queue.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

test('runs at most `concurrency` jobs, queues up to `depth`, refuses the rest with no_capacity', async () => {
  const depths: number[] = [];
  const queue = new WorkQueue({ concurrency: 1, depth: 1, onDepth: (waiting) => depths.push(waiting) });
  const first = deferred();
  const started: string[] = [];
  const a = queue.run(async () => {
    started.push('a');
    await first.promise;
  });
  assert.equal(queue.isFull, false, 'one slot taken, the queue still has room');
  const b = queue.run(async () => {
    started.push('b');
  });
  assert.equal(queue.isFull, true);
  await assert.rejects(
    queue.run(async () => started.push('c')),
    (error) => isSwitchboardError(error) && error.code === 'no_capacity' && error.retryAfterSeconds! >= 1,
  );
  assert.deepEqual(started, ['a']);
  assert.equal(queue.depth, 1);
  first.resolve();
  await Promise.all([a, b]);
  assert.deepEqual(started, ['a', 'b']);
  assert.equal(queue.depth, 0);
  assert.equal(queue.active, 0);
  assert.equal(queue.isFull, false);
  assert.ok(depths.includes(1) && depths.at(-1) === 0);
});

test('a waiting job whose signal aborts leaves the queue and never runs', async () => {
  const queue = new WorkQueue({ concurrency: 1, depth: 4 });
  const hold = deferred();
  const a = queue.run(() => hold.promise);
  const abort = new AbortController();
  let ran = false;
  const b = queue.run(async () => {
    ran = true;
  }, abort.signal);
  assert.equal(queue.depth, 1);
  abort.abort(new Error('client went away'));
  await assert.rejects(b, /client went away/);
  assert.equal(queue.depth, 0);
  hold.resolve();
  await a;
  assert.equal(ran, false);
  assert.equal(queue.active, 0);
});

test('a finishing job hands its slot to the next waiter; no newcomer jumps the queue', async () => {
  const queue = new WorkQueue({ concurrency: 1, depth: 4 });
  const hold = deferred();
  const order: string[] = [];
  const a = queue.run(async () => {
    await hold.promise;
    order.push('a');
  });
  const b = queue.run(async () => {
    order.push('b');
  });
  hold.resolve();
  await new Promise((r) => setImmediate(r));
  const c = queue.run(async () => {
    order.push('c');
  });
  await Promise.all([a, b, c]);
  assert.deepEqual(order, ['a', 'b', 'c']);
});

test('runStream holds its slot until the stream is consumed or closed', async () => {
  const queue = new WorkQueue({ concurrency: 1, depth: 0 });
  async function* numbers() {
    yield 1;
    yield 2;
  }
  const iterator = queue.runStream(numbers)[Symbol.asyncIterator]();
  assert.deepEqual(await iterator.next(), { value: 1, done: false });
  assert.equal(queue.active, 1);
  await assert.rejects(
    queue.run(async () => 0),
    (error) => isSwitchboardError(error) && error.code === 'no_capacity',
  );
  await iterator.return?.();
  assert.equal(queue.active, 0);
  assert.equal(await queue.run(async () => 7), 7);
});

test('waiting jobs start by owner in turns; a full queue makes room for a newcomer by refusing the heaviest owner', async () => {
  const queue = new WorkQueue({ concurrency: 1, depth: 3 });
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const job = (name: string, owner: string) =>
    queue.run(
      () => {
        started.push(name);
        return new Promise<string>((resolve) => gates.set(name, () => resolve(name)));
      },
      undefined,
      owner,
    );
  const heavy = ['h0', 'h1', 'h2', 'h3'].map((name) => job(name, 'heavy'));
  const light = job('l1', 'light');
  await assert.rejects(heavy[3]!, { code: 'no_capacity' });
  for (const name of ['h0', 'h1', 'l1', 'h2']) {
    while (!gates.has(name)) await new Promise((r) => setImmediate(r));
    gates.get(name)!();
  }
  assert.equal(await light, 'l1');
  assert.deepEqual(started, ['h0', 'h1', 'l1', 'h2']);
  await Promise.all(heavy.slice(0, 3));
});
