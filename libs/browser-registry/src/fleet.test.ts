import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from 'nats';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import { createLogger } from '@switchboard/telemetry';
import { RegistryAnnouncer } from './announcer.js';
import { BrowserFleet } from './fleet.js';
import type { SessionRecord } from './records.js';

const logger = createLogger({ service: 'test', level: 'silent' });
let nats: NatsHandle;
let nc: NatsConnection;
let fleet: BrowserFleet;

before(async () => {
  nats = await startNats();
  nc = await connect(nats.connectOptions('operator'));
  fleet = await BrowserFleet.open(nc, { logger });
});

after(async () => {
  fleet?.close();
  await nc?.close();
  await nats?.stop();
});

const capacity = { maxSessions: 4, activeSessions: 0, warmBrowsers: 1 };

async function until(what: string, check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5_000; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) assert.fail(`${what} within 5 s`);
  }
}

function worker(workerId: string, grpcAddress: string): Promise<RegistryAnnouncer> {
  return RegistryAnnouncer.open(nc, { workerId, grpcAddress, devtoolsAddress: `${grpcAddress}-dt` }, logger);
}

const activeSession = (id: string): SessionRecord['session'] => ({
  session_id: id,
  status: 'active',
  owner_key_id: 'abcdefghijkl',
  created_at: new Date().toISOString(),
  current_url: 'about:blank',
  history: [],
  screenshots: [],
  pdfs: [],
  end_reason: '',
});

test('a worker announced from its predecessor’s address replaces it, and the predecessor’s sessions are gone with it', async () => {
  const first = await worker('worker-first', '127.0.0.1:7001');
  const neighbour = await worker('worker-neighbour', '127.0.0.1:7002');
  await first.announce(capacity);
  await neighbour.announce(capacity);
  await first.putSession(activeSession('session-of-first'));
  await until('both workers', () => fleet.liveWorkers().length === 2);
  const record = (await fleet.session('session-of-first'))!;
  assert.equal(fleet.effectiveStatus(record), 'active');

  // Killed without withdrawing: its heartbeat is still fresh when the next process announces.
  const second = await worker('worker-second', '127.0.0.1:7001');
  await second.announce(capacity);
  await until('the second worker', () => fleet.workerAt('127.0.0.1:7001') === 'worker-second');
  assert.deepEqual(
    fleet
      .liveWorkers()
      .map((w) => w.worker_id)
      .sort(),
    ['worker-neighbour', 'worker-second'],
  );
  assert.equal(fleet.isAlive('worker-first'), false);
  assert.equal(fleet.effectiveStatus(record), 'expired');
  assert.equal(fleet.workerAt('127.0.0.1:7002'), 'worker-neighbour');

  // Withdrawing frees the address; a record whose key names another worker is not taken.
  await second.withdraw();
  await until('the address free', () => fleet.workerAt('127.0.0.1:7001') === undefined);
  const workers = await nc.jetstream().views.kv('browser_workers');
  await workers.put(
    'worker-impostor',
    new TextEncoder().encode(
      JSON.stringify({
        worker_id: 'worker-neighbour',
        grpc_address: '127.0.0.1:7002',
        devtools_address: 'x',
        max_sessions: 1,
        active_sessions: 0,
        warm_browsers: 0,
        updated_at_ms: Date.now(),
      }),
    ),
  );
  await neighbour.announce(capacity); // a later write, to know the impostor's has been seen
  await until('the neighbour rewritten', () => fleet.liveWorkers().length === 1);
  assert.equal(fleet.workerAt('127.0.0.1:7002'), 'worker-neighbour');
  assert.deepEqual(
    fleet.liveWorkers().map((w) => w.worker_id),
    ['worker-neighbour'],
  );
});

test('with no worker live, placement may still pick one whose heartbeat is only late, never one found unreachable', async () => {
  const quick = await BrowserFleet.open(nc, { logger, staleAfterMs: 300 });
  try {
    // The earlier test's workers (still in the bucket) go late first.
    await until('no worker live', () => quick.liveWorkers().length === 0);
    const late = await worker('worker-late', '127.0.0.1:7101');
    await late.announce(capacity);
    await until('the worker', () => quick.pickWorker()?.worker_id === 'worker-late');
    assert.notEqual(quick.pickLateWorker()?.worker_id, 'worker-late', 'a live worker is not late');
    await until('its heartbeat late', () => quick.liveWorkers().length === 0);
    assert.equal(quick.pickWorker(), undefined);
    for (const id of ['worker-first', 'worker-neighbour']) quick.forgetWorker(id);
    assert.equal(quick.pickLateWorker()?.worker_id, 'worker-late');
    quick.forgetWorker('worker-late');
    assert.equal(quick.pickLateWorker(), undefined);
    await late.withdraw();
  } finally {
    quick.close();
  }
});
