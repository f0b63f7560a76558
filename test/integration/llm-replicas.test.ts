// Three llm worker processes behind one DNS name, each on a loopback address of its own and one
// port (pods behind a headless Service), and one gateway resolving that name through the test's
// DNS server: calls spread over every replica, around a busy one, onto one added at run time,
// and around one that drains (SIGTERM) or dies (SIGKILL).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { replicaMetrics, startWorkerReplicas, type WorkerReplicas } from '../support/replicas.js';
import { readSse } from '../support/sse.js';
import { errorOf, sleep, type Stack, startStack, until } from '../support/stack.js';
import { tinyLlmRepository, type TinyModelRepository, type WorkerProcess } from '../support/worker.js';

let repo: TinyModelRepository;
let replicas: WorkerReplicas;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  repo = await tinyLlmRepository();
  replicas = await startWorkerReplicas('llm', 3, { MODEL_DIR: repo.modelDir, ORT_INTRA_OP_THREADS: '1' });
  stack = await startStack({ env: { ...replicas.gatewayEnv, WORKER_RESOLVE_INTERVAL_MS: '300' } });
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

const view = () => replicaMetrics(stack.gateway.metricsUrl, 'llm');
const calls = () => view().calls();
const callsSince = (before: Map<string, number>) => view().callsSince(before);
const resolved = () => view().resolved();
const inFlight = (address: string) => view().inFlight(address);

interface Outcome {
  started: number;
  status: number;
  code?: string;
}

/**
 * `concurrency` callers each sending calls one after another until `stop` says so. A streamed
 * call succeeds when it is a 200 whose events end with `[DONE]` and hold no error.
 */
async function load(
  concurrency: number,
  body: Record<string, unknown>,
  stop: () => boolean,
): Promise<Outcome[]> {
  const results: Outcome[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop()) {
        const started = Date.now();
        const res = await query(body);
        if (res.status !== 200) {
          results.push({ started, status: res.status, code: (await errorOf(res)).code });
        } else if (body.stream === true) {
          const { data } = await readSse(res);
          const failure = data.find((event) => event.includes('"error"'));
          const code =
            failure === undefined
              ? undefined
              : (JSON.parse(failure) as { error: { code: string } }).error.code;
          const complete = data.at(-1) === '[DONE]' && code === undefined;
          results.push({ started, status: complete ? 200 : 502, code });
        } else {
          await res.arrayBuffer();
          results.push({ started, status: 200 });
        }
      }
    }),
  );
  return results;
}

const addressOf = (worker: WorkerProcess) => worker.address;

test('60 calls from one gateway: each of 3 replicas serves 20 ± 6, as its own metrics say too', async () => {
  await until(async () => (await resolved()).length === 3, 'three replicas resolved');
  const before = await calls();
  const ttft = 'llm_time_to_first_token_seconds_count';
  const served = await Promise.all(replicas.workers.map((w) => w.metric(ttft)));
  for (let round = 0; round < 15; round++) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => query({ prompt: 'Once', max_tokens: 4 })),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 200, 200],
    );
  }
  const counts = await callsSince(before);
  for (const [index, worker] of replicas.workers.entries()) {
    const count = counts.get(addressOf(worker)) ?? 0;
    assert.ok(
      count >= 14 && count <= 26,
      `${worker.address}: ${count} of 60 (${JSON.stringify([...counts])})`,
    );
    assert.equal((await worker.metric(ttft)) - served[index]!, count, `${worker.address}'s own count`);
  }
});

test('a replica held busy with long streams gets at most 20 % of the new calls', async () => {
  const [busy] = replicas.workers as [WorkerProcess];
  const all = replicas.workers.map((w) => w.address.split(':')[0]!);
  // Only the busy replica in the name while the streams open, so they all go to it.
  replicas.dns.setRecords(replicas.address.split(':')[0]!, [all[0]!]);
  await until(async () => (await resolved()).length === 1, 'down to one replica');
  const abort = new AbortController();
  // Opened and never read: each stays open (in flight) until aborted or the generation ends.
  const streams = Array.from({ length: 3 }, () =>
    query({ prompt: 'Once upon a time', max_tokens: 2000, stream: true }, abort.signal).catch(
      () => undefined,
    ),
  );
  try {
    await until(async () => (await inFlight(busy.address)) === 3, 'three streams open on the busy replica');
    replicas.dns.setRecords(replicas.address.split(':')[0]!, all);
    await until(async () => (await resolved()).length === 3, 'three replicas again');
    const before = await calls();
    for (let i = 0; i < 20; i++) assert.equal((await query({ prompt: 'Hi', max_tokens: 2 })).status, 200);
    const counts = await callsSince(before);
    assert.equal(await inFlight(busy.address), 3, 'the streams were open all along');
    assert.ok((counts.get(busy.address) ?? 0) <= 4, `busy replica got ${counts.get(busy.address)} of 20`);
  } finally {
    abort.abort();
    await Promise.all(streams.map(async (stream) => (await stream)?.body?.cancel().catch(() => undefined)));
  }
});

test('a replica added to the name gets calls within 30 s', async () => {
  const added = await replicas.add();
  const started = Date.now();
  const before = await calls();
  while (((await callsSince(before)).get(added.address) ?? 0) === 0) {
    assert.ok(Date.now() - started < 30_000, 'the new replica got no call within 30 s');
    assert.equal((await query({ prompt: 'Hi', max_tokens: 2 })).status, 200);
  }
});

test('a replica drained with SIGTERM while calls and streams run: not one fails', async (t) => {
  const victim = replicas.workers[1]!;
  let stopping = false;
  const body = { prompt: 'Once upon a time', max_tokens: 150 };
  const running = Promise.all([
    load(4, body, () => stopping),
    load(2, { ...body, stream: true }, () => stopping),
  ]);
  await until(async () => (await inFlight(victim.address)) >= 2, 'calls open on the replica');
  const open = await inFlight(victim.address);
  victim.child.kill('SIGTERM');
  await new Promise((resolve) => victim.child.once('exit', resolve));
  await sleep(300);
  stopping = true;
  const results = (await running).flat();
  t.diagnostic(`${results.length} calls, ${open} open on the replica at SIGTERM`);
  assert.deepEqual(
    results.filter((r) => r.status !== 200),
    [],
  );
  assert.equal(victim.child.exitCode, 0, 'drained and exited cleanly');
});

test('a replica killed with SIGKILL: only calls it was running fail, each 503 unavailable; later ones succeed', async (t) => {
  const victim = replicas.workers[2]!;
  let stopping = false;
  const running = load(6, { prompt: 'Once upon a time', max_tokens: 200 }, () => stopping);
  await until(async () => (await inFlight(victim.address)) > 0, 'calls open on the replica');
  const killedAt = Date.now();
  victim.child.kill('SIGKILL');
  await sleep(1_500);
  stopping = true;
  const results = await running;
  const failed = results.filter((r) => r.status !== 200);
  t.diagnostic(`${results.length} calls, ${failed.length} failed`);
  for (const failure of failed) {
    assert.deepEqual([failure.status, failure.code], [503, 'unavailable']);
    assert.ok(failure.started < killedAt, 'a call started after the kill failed');
  }
  assert.ok(failed.length <= 6, `${failed.length} failed`);
  assert.ok(
    results.some((r) => r.started > killedAt && r.status === 200),
    'calls after the kill succeed',
  );
});
