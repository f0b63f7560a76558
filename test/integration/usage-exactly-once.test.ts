// Usage is counted exactly once and never lost: a call the gateway retried on another replica
// counts once; a gateway process killed with SIGKILL right after answering has already stored
// what it answered; Redis (which keeps nothing), NATS (its data kept) and the usage database
// restarting, and a new gateway replica joining, change no total. Two llm worker replicas behind
// one DNS name, two gateways sharing NATS, Redis and the usage store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPostgres, type PostgresHandle } from '@switchboard/devcluster';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { spawnGateway, startGateway, type GatewayProcess } from '../support/gateway.js';
import { replicaMetrics, startWorkerReplicas, type WorkerReplicas } from '../support/replicas.js';
import { readSse } from '../support/sse.js';
import { startStack, until, type Stack } from '../support/stack.js';
import { untilTotals, usageAroundToday } from '../support/usage.js';
import { tinyLlmRepository, type TinyModelRepository } from '../support/worker.js';

let repo: TinyModelRepository;
let replicas: WorkerReplicas;
let stack: Stack;
/** The usage database of this file's own, so restarting it disturbs no other test file. */
let postgres: PostgresHandle;
let model: string;

before(async () => {
  repo = await tinyLlmRepository();
  model = repo.modelId;
  // One generation at a time and no queue: a replica running one answers the next no_capacity
  // before any work, which the gateway retries on the other replica.
  replicas = await startWorkerReplicas('llm', 2, {
    MODEL_DIR: repo.modelDir,
    ORT_INTRA_OP_THREADS: '1',
    LLM_MAX_BATCH: '1',
    LLM_QUEUE_DEPTH: '0',
  });
  postgres = await startPostgres();
  stack = await startStack({
    gateways: 2,
    env: { ...replicas.gatewayEnv, WORKER_RESOLVE_INTERVAL_MS: '300', USAGE_DATABASE_URL: postgres.url },
  });
});
after(async () => {
  await stack?.stop();
  await replicas?.stop();
  await postgres?.stop();
  await repo?.remove();
});

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

const freshKey = () => createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: null });

const query = (
  gateway: GatewayProcess,
  key: CreatedKey,
  body: Record<string, unknown>,
  signal?: AbortSignal,
) =>
  fetch(`${gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', temperature: 0, ...body }),
    signal,
  });

async function usageOfCall(res: Response): Promise<Usage> {
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { usage: Usage }).usage;
}

function expectedFor(usages: Usage[]): Record<string, number> {
  return {
    [`llm/${model}/requests`]: usages.length,
    [`llm/${model}/input_tokens`]: usages.reduce((sum, u) => sum + u.prompt_tokens, 0),
    [`llm/${model}/output_tokens`]: usages.reduce((sum, u) => sum + u.completion_tokens, 0),
  };
}

test('calls the gateway retried on the other replica are counted once each', async () => {
  const [first, second] = stack.gateways as [GatewayProcess, GatewayProcess];
  const view = replicaMetrics(first.metricsUrl, 'llm');
  await until(async () => (await view.resolved()).length === 2, 'both replicas resolved');
  await until(
    async () => (await replicaMetrics(second.metricsUrl, 'llm').resolved()).length === 2,
    'both replicas resolved by the second gateway',
  );

  // A long stream through the second gateway fills one replica. The first gateway does not see
  // it as busy (it counts its own calls), so it sends about every other call there first, gets
  // no_capacity, and retries on the other replica.
  const holder = await freshKey();
  const abort = new AbortController();
  const stream = query(second, holder, { max_tokens: 2000, stream: true }, abort.signal).catch(
    () => undefined,
  );
  const secondView = replicaMetrics(second.metricsUrl, 'llm');
  await until(
    async () => (await Promise.all(replicas.workers.map((w) => secondView.inFlight(w.address)))).includes(1),
    'the stream running on one replica',
  );
  try {
    const key = await freshKey();
    const before = await view.calls();
    const usages: Usage[] = [];
    for (let i = 0; i < 6; i++) usages.push(await usageOfCall(await query(first, key, { max_tokens: 3 })));
    const attempts = [...(await view.callsSince(before)).values()].reduce((a, b) => a + b, 0);
    assert.ok(attempts > usages.length, `${attempts} attempts for ${usages.length} calls: no retry happened`);
    await untilTotals(() => usageAroundToday(first, key.key), expectedFor(usages));
  } finally {
    abort.abort();
    await (await stream)?.body?.cancel().catch(() => undefined);
  }
});

test('a gateway process killed with SIGKILL right after answering has stored what it answered', async () => {
  const key = await freshKey();
  const usages: Usage[] = [];

  const plain = await spawnGateway(stack.gatewayEnv);
  try {
    usages.push(await usageOfCall(await query(plain, key, { max_tokens: 5 })));
    plain.child.kill('SIGKILL');
  } finally {
    await plain.stop();
  }

  const streaming = await spawnGateway(stack.gatewayEnv);
  try {
    const { status, data } = await readSse(await query(streaming, key, { max_tokens: 4, stream: true }));
    streaming.child.kill('SIGKILL');
    assert.equal(status, 200);
    assert.equal(data.at(-1), '[DONE]');
    const finish = JSON.parse(data.at(-2)!) as { usage: Usage };
    usages.push(finish.usage);
  } finally {
    await streaming.stop();
  }

  await untilTotals(() => usageAroundToday(stack.gateway, key.key), expectedFor(usages));
});

test('Redis, NATS and the usage database restarted, a new gateway joined: the totals are unchanged', async () => {
  const key = await freshKey();
  const usages: Usage[] = [];
  for (const gateway of stack.gateways)
    usages.push(await usageOfCall(await query(gateway, key, { max_tokens: 4 })));
  const expected = expectedFor(usages);
  await untilTotals(() => usageAroundToday(stack.gateway, key.key), expected);

  await stack.redis.restart();
  await stack.nats.restart();
  const joined = await startGateway(stack.gatewayEnv);
  try {
    // Generous: the old replicas reconnect to the restarted servers on their own schedule.
    for (const gateway of [...stack.gateways, joined]) {
      await untilTotals(() => usageAroundToday(gateway, key.key), expected, 30_000);
    }

    await postgres.restart();
    for (const gateway of [...stack.gateways, joined]) {
      await untilTotals(() => usageAroundToday(gateway, key.key), expected, 30_000);
    }
    // And the gateways record again once the database is back.
    usages.push(await usageOfCall(await query(joined, key, { max_tokens: 2 })));
    await untilTotals(() => usageAroundToday(stack.gateway, key.key), expectedFor(usages));
  } finally {
    await joined.stop();
  }
});
