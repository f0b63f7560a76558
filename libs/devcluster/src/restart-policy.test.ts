import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CrashLoopBackoff, exitDescription, Healer, type Timers } from './restart-policy.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** A clock and timers that move only when told, so minutes of back-off take no time. */
function manualTime() {
  let now = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  let ids = 0;
  const timers: Timers = {
    setTimeout: (callback, ms) => {
      pending.set(++ids, { at: now + ms, callback });
      return ids;
    },
    clearTimeout: (id) => pending.delete(id as number),
  };
  return {
    now: () => now,
    timers,
    /** Waits: how many timers are set (the healer's loop runs between promise turns). */
    pendingDelays: () => [...pending.values()].map((timer) => timer.at - now),
    async advance(ms: number) {
      now += ms;
      for (const [id, timer] of [...pending]) {
        if (timer.at <= now) {
          pending.delete(id);
          timer.callback();
        }
      }
      await settle();
    },
  };
}

/** Lets the healer's awaits run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('the back-off is 10 s, doubling on each exit, capped at 5 min', () => {
  const backoff = new CrashLoopBackoff({ now: () => 0 });
  const delays = Array.from({ length: 8 }, () => backoff.next());
  assert.deepEqual(
    delays.map((ms) => ms / SECOND),
    [10, 20, 40, 80, 160, 300, 300, 300],
  );
  assert.equal(backoff.restarts, 8);
});

test('a start that ran 10 min without exiting resets the back-off; a shorter one does not', () => {
  let now = 0;
  const backoff = new CrashLoopBackoff({ now: () => now });
  assert.equal(backoff.next(), 10 * SECOND);
  backoff.started();
  now += 9 * MINUTE;
  assert.equal(backoff.next(), 20 * SECOND, '9 min is not long enough');
  backoff.started();
  now += 10 * MINUTE;
  assert.equal(backoff.next(), 10 * SECOND, '10 min of running resets it');
  assert.equal(backoff.restarts, 3, 'the restart count is never reset');
});

test('the healer says what it does, waits out the back-off and restarts', async () => {
  const time = manualTime();
  const said: string[] = [];
  const healer = new Healer({ say: (m) => said.push(m), now: time.now, timers: time.timers });
  let restarts = 0;
  const restart = () => {
    restarts += 1;
    return Promise.resolve({ running: true });
  };
  healer.crashed('llm-2', 'exited (signal SIGKILL)', restart, () => true);
  assert.deepEqual(said, ['llm-2 exited (signal SIGKILL); restarting in 10 s (restart 1)']);
  assert.ok(healer.isHealing('llm-2'));
  // A second exit seen while it heals is the same crash.
  healer.crashed('llm-2', 'exited (code 1)', restart, () => true);
  assert.deepEqual(time.pendingDelays(), [10 * SECOND]);
  await time.advance(9 * SECOND);
  assert.equal(restarts, 0, 'not before 10 s');
  await time.advance(1 * SECOND);
  assert.equal(restarts, 1);
  assert.equal(said.at(-1), 'llm-2 restarted');
  assert.ok(!healer.isHealing('llm-2'));

  // It crashes again a minute later: twice the wait.
  await time.advance(MINUTE);
  healer.crashed('llm-2', 'exited (code 1)', restart, () => true);
  assert.equal(said.at(-1), 'llm-2 exited (code 1); restarting in 20 s (restart 2)');
  await time.advance(20 * SECOND);
  assert.equal(restarts, 2);
  await healer.close();
});

test('a failed restart counts as another exit, with the next back-off', async () => {
  const time = manualTime();
  const said: string[] = [];
  const healer = new Healer({ say: (m) => said.push(m), now: time.now, timers: time.timers });
  let attempts = 0;
  const restart = () => {
    attempts += 1;
    if (attempts === 1) return Promise.reject(new Error('port taken\nmore detail'));
    if (attempts === 2) return Promise.resolve({ running: false });
    return Promise.resolve({ running: true });
  };
  healer.crashed('gateway', 'exited (code 1)', restart, () => true);
  await time.advance(10 * SECOND);
  assert.equal(said.at(-1), 'gateway failed to restart (port taken); restarting in 20 s (restart 2)');
  await time.advance(20 * SECOND);
  assert.equal(said.at(-1), 'gateway exited as soon as it had restarted; restarting in 40 s (restart 3)');
  await time.advance(40 * SECOND);
  assert.equal(attempts, 3);
  assert.equal(said.at(-1), 'gateway restarted');
  await healer.close();
});

test('nothing is restarted once unwanted (removed on purpose) or once the healer closes', async () => {
  const time = manualTime();
  const healer = new Healer({ say: () => undefined, now: time.now, timers: time.timers });
  let restarts = 0;
  const restart = () => {
    restarts += 1;
    return Promise.resolve({ running: true });
  };
  let wanted = true;
  healer.crashed('llm-3', 'exited (signal SIGKILL)', restart, () => wanted);
  wanted = false;
  await time.advance(10 * SECOND);
  assert.equal(restarts, 0, 'a replica removed while down stays gone');
  assert.ok(!healer.isHealing('llm-3'));

  healer.crashed('whisper', 'exited (signal SIGKILL)', restart, () => true);
  await healer.close();
  assert.deepEqual(time.pendingDelays(), [], 'close() cancels the pending back-off');
  healer.crashed('diffusion', 'exited (signal SIGKILL)', restart, () => true);
  await time.advance(5 * MINUTE);
  assert.equal(restarts, 0);
});

test('exits are described by signal or code', () => {
  assert.equal(exitDescription({ exitCode: null, signalCode: 'SIGKILL' }), 'exited (signal SIGKILL)');
  assert.equal(exitDescription({ exitCode: 1, signalCode: null }), 'exited (code 1)');
});
