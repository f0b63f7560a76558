// The llm worker's refusals that depend on its state: a full queue (503 no_capacity) and a model
// still loading (503 model_loading, /models says loading, then ready).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { waitForServing } from '@switchboard/grpc';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import type { GatewayProcess } from '../support/gateway.js';
import {
  errorOf,
  sleep,
  startWorkerWithGateway,
  startStack,
  type WorkerWithGateway,
  type Stack,
} from '../support/stack.js';
import {
  startWorker,
  tinyLlmRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

let repo: TinyModelRepository;
let busy: WorkerProcess;
let stack: Stack;
let key: CreatedKey;
const started: WorkerWithGateway[] = [];

before(async () => {
  repo = await tinyLlmRepository();
  busy = await startWorker('llm', {
    env: { MODEL_DIR: repo.modelDir, LLM_MAX_BATCH: '1', LLM_QUEUE_DEPTH: '1', ORT_INTRA_OP_THREADS: '1' },
  });
  stack = await startStack({ env: { LLM_ADDR: busy.address } });
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await stack?.stop();
  await busy?.stop();
  await repo?.remove();
});

const query = (gateway: GatewayProcess, body: unknown) =>
  fetch(`${gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('overfilling the queue → 503 no_capacity with Retry-After; the admitted requests complete', async () => {
  // Sequenced by the worker's own gauges rather than by sleeps, so a slow machine cannot let the
  // running request finish (and free its slot) before the overflow arrives.
  const long = { prompt: 'Tell me a story', max_tokens: 2000, temperature: 0 };
  const running = query(stack.gateway, long);
  await untilMetric('llm_active_generations', 1);
  const queued = query(stack.gateway, long);
  await untilMetric('llm_queue_depth', 1);
  const refused = await Promise.all([query(stack.gateway, long), query(stack.gateway, long)]);

  for (const res of refused) {
    assert.equal(res.status, 503);
    assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.equal((await errorOf(res)).code, 'no_capacity');
  }
  for (const res of await Promise.all([running, queued])) {
    assert.equal(res.status, 200, 'one running and one queued');
    assert.equal(((await res.json()) as { finish_reason: string }).finish_reason, 'length');
  }
  assert.equal(await busy.metric('llm_queue_depth'), 0);
});

/** Polls a metric until it is `value`; only sequences the test, so the deadline is generous. */
async function untilMetric(name: string, value: number): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    if ((await busy.metric(name)) === value) return;
    await sleep(10);
  }
  assert.fail(`${name} never reached ${value}`);
}

test('while the model loads: /query → 503 model_loading with Retry-After, /models says loading, then ready', async () => {
  const loading = await startWorkerWithGateway(
    'llm',
    stack,
    {
      MODEL_DIR: repo.modelDir,
      // Long enough that a gateway starting on a busy machine still finds the model loading.
      LLM_LOAD_DELAY_MS: '10000',
      LLM_LOADING_RETRY_AFTER_SECONDS: '3',
    },
    { waitServing: false },
  );
  started.push(loading);
  const { gateway } = loading;

  for (const stream of [false, true]) {
    const res = await query(gateway, { prompt: 'hello', max_tokens: 3, stream });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal((await errorOf(res)).code, 'model_loading');
  }
  const models = async () => {
    const res = await fetch(`${gateway.url}/models`, { headers: bearer(key.key) });
    return ((await res.json()) as { data: { id: string; status: string; capability: string }[] }).data;
  };
  assert.deepEqual(
    (await models()).map((m) => [m.capability, m.id, m.status]),
    [['llm', repo.modelId, 'loading']],
  );

  assert.equal(await waitForServing(loading.worker.address, { timeoutMs: 30_000 }), 'SERVING');
  let status = 'loading';
  for (let i = 0; i < 40 && status !== 'ready'; i++) {
    status = (await models())[0]?.status ?? 'missing';
    if (status !== 'ready') await sleep(100);
  }
  assert.equal(status, 'ready');
  const res = await query(gateway, { prompt: 'hello', max_tokens: 3 });
  assert.equal(res.status, 200);
});
