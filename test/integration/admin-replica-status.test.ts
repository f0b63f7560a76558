// Two llm worker processes behind one DNS name and one gateway resolving it through the test's DNS
// server: GET /admin/api/status lists both replicas under the llm worker with their health, the
// calls the gateway has open to each and has sent each, and follows one that drains and leaves.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startWorkerReplicas, type WorkerReplicas } from '../support/replicas.js';
import { type Stack, startStack, until } from '../support/stack.js';
import { tinyLlmRepository, type TinyModelRepository } from '../support/worker.js';

interface Replica {
  address: string;
  status: string;
  in_flight: number;
  served: number;
}

interface WorkerStatus {
  name: string;
  address: string;
  status: string;
  replicas: Replica[];
}

let repo: TinyModelRepository;
let replicas: WorkerReplicas;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  repo = await tinyLlmRepository();
  replicas = await startWorkerReplicas('llm', 2, { MODEL_DIR: repo.modelDir, ORT_INTRA_OP_THREADS: '1' });
  // Browser and animation health checks resolve their names through WORKER_DNS_SERVER too, as in
  // the local runner's replica mode. Any grpc.health.v1 server shows it: the first llm replica's.
  const [host, port] = replicas.workers[0]!.address.split(':') as [string, string];
  for (const name of ['browser', 'animation']) replicas.dns.setRecords(`${name}.replicas.test`, [host]);
  stack = await startStack({
    env: {
      ...replicas.gatewayEnv,
      WORKER_RESOLVE_INTERVAL_MS: '300',
      BROWSER_ADDR: `browser.replicas.test:${port}`,
      ANIMATION_ADDR: `animation.replicas.test:${port}`,
    },
  });
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: null });
});
after(async () => {
  await stack?.stop();
  await replicas?.stop();
  await repo?.remove();
});

const query = (body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ temperature: 0, ...body }),
    signal,
  });

async function workers(): Promise<WorkerStatus[]> {
  const res = await admin(stack.gateway, 'GET', '/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { workers: WorkerStatus[] }).workers;
}

async function llm(): Promise<WorkerStatus> {
  const worker = (await workers()).find((w) => w.name === 'llm');
  assert.ok(worker, 'the llm worker is listed');
  return worker;
}

const byAddress = (worker: WorkerStatus) => new Map(worker.replicas.map((r) => [r.address, r]));
const addresses = () => replicas.workers.map((w) => w.address).sort();

test('both replicas are listed SERVING; their served counts add up to the calls made', async () => {
  await until(async () => {
    const worker = await llm();
    return (
      JSON.stringify(worker.replicas.map((r) => r.address).sort()) === JSON.stringify(addresses()) &&
      worker.replicas.every((r) => r.status === 'SERVING')
    );
  }, 'both replicas listed and SERVING');
  const before = byAddress(await llm());
  for (let i = 0; i < 10; i++) assert.equal((await query({ prompt: 'Hi', max_tokens: 2 })).status, 200);
  const worker = await llm();
  assert.equal(worker.status, 'SERVING');
  assert.equal(worker.address, replicas.address);
  let sent = 0;
  for (const replica of worker.replicas) {
    const calls = replica.served - (before.get(replica.address)?.served ?? 0);
    assert.ok(calls > 0, `${replica.address} got none of the 10 calls`);
    assert.equal(replica.in_flight, 0, `${replica.address}: nothing open after the calls`);
    sent += calls;
  }
  assert.equal(sent, 10);
  // The workers this gateway does not route over a pool list no replicas; their names resolved.
  for (const other of (await workers()).filter((w) => w.name === 'browser' || w.name === 'animation')) {
    assert.deepEqual([other.status, other.replicas], ['SERVING', []], other.name);
  }
});

test('a long stream counts in flight on its replica until it is cancelled', async () => {
  const abort = new AbortController();
  // Opened and never read: it stays open until aborted or the generation ends.
  const stream = query({ prompt: 'Once upon a time', max_tokens: 2000, stream: true }, abort.signal).catch(
    () => undefined,
  );
  try {
    await until(
      async () => (await llm()).replicas.reduce((sum, r) => sum + r.in_flight, 0) === 1,
      'one call in flight',
    );
  } finally {
    abort.abort();
    await (await stream)?.body?.cancel().catch(() => undefined);
  }
  await until(
    async () => (await llm()).replicas.every((r) => r.in_flight === 0),
    'nothing in flight after the cancel',
  );
});

test('a replica stopped with SIGTERM shows UNREACHABLE, and leaves the list once out of DNS', async () => {
  const [survivor, victim] = replicas.workers as [(typeof replicas.workers)[0], (typeof replicas.workers)[0]];
  victim.child.kill('SIGTERM');
  await new Promise((resolve) => victim.child.once('exit', resolve));
  // Still resolved: its health watch finds nobody there.
  await until(
    async () => byAddress(await llm()).get(victim.address)?.status === 'UNREACHABLE',
    'the stopped replica UNREACHABLE',
  );
  const worker = await llm();
  assert.equal(byAddress(worker).get(survivor.address)?.status, 'SERVING');
  assert.equal(worker.status, 'SERVING', 'one replica serving keeps the worker SERVING');

  replicas.dns.setRecords(replicas.address.split(':')[0]!, [survivor.address.split(':')[0]!]);
  await until(
    async () => (await llm()).replicas.every((r) => r.address !== victim.address),
    'the stopped replica gone from the list',
  );
  assert.deepEqual(
    (await llm()).replicas.map((r) => [r.address, r.status]),
    [[survivor.address, 'SERVING']],
  );
});
