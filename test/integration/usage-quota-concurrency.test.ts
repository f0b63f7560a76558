// Hard quotas under concurrency: two gateway replicas sharing NATS, Redis and the usage store, and
// a key whose quota allows less than the calls it fires at both at once. Costs known up front are
// reserved before the worker is called, so exactly the quota's worth succeeds and the rest is
// refused with 429 quota_exceeded naming the meter and a Retry-After to the end of the UTC day;
// the quota events are published once each. Real diffusion and llm workers on tiny models.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { bearer, type CreatedKey } from '../support/admin.js';
import type { GatewayProcess } from '../support/gateway.js';
import { errorOf, sleep, startStack, until, type Stack } from '../support/stack.js';
import {
  collectQuotaEvents,
  createKeyWithQuotas,
  secondsToUtcMidnight,
  untilTotals,
  usageAroundToday,
  type QuotaEventView,
} from '../support/usage.js';
import {
  startWorker,
  tinyDiffusionRepository,
  tinyLlmRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

let objects: string;
let repos: TinyModelRepository[] = [];
let workers: WorkerProcess[] = [];
let stack: Stack;
let nc: NatsConnection;
let events: QuotaEventView[];
let llmModel: string;
let diffusionModel: string;

before(async () => {
  objects = await mkdtemp(join(tmpdir(), 'sb-usage-quota-'));
  const [llmRepo, diffusionRepo] = await Promise.all([tinyLlmRepository(), tinyDiffusionRepository()]);
  repos = [llmRepo, diffusionRepo];
  llmModel = llmRepo.modelId;
  diffusionModel = diffusionRepo.modelId;
  const common = { ORT_INTRA_OP_THREADS: '1', OBJECT_STORE_DIR: objects };
  workers = await Promise.all([
    startWorker('llm', { env: { ...common, MODEL_DIR: llmRepo.modelDir } }),
    startWorker('diffusion', {
      env: { ...common, MODEL_DIR: diffusionRepo.modelDir, DIFFUSION_QUEUE_DEPTH: '32' },
    }),
  ]);
  stack = await startStack({
    gateways: 2,
    env: {
      LLM_ADDR: workers[0]!.address,
      DIFFUSION_ADDR: workers[1]!.address,
      OBJECT_STORE_DIR: objects,
    },
  });
  nc = await connect(stack.nats.connectOptions('operator'));
  events = collectQuotaEvents(nc);
  // A round trip through the server: the subscription is in place before any event is published.
  await nc.flush();
});
after(async () => {
  await nc?.close();
  await stack?.stop();
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(repos.map((r) => r.remove()));
  if (objects) await rm(objects, { recursive: true, force: true });
});

interface Outcome {
  status: number;
  body: Record<string, unknown>;
  code?: string;
  param?: string;
  retryAfter?: number;
  /** Seconds to the next UTC midnight when the call was sent, and when its answer came. */
  sentToMidnight: number;
  toMidnight: number;
}

/** `count` calls fired at once, alternating between the two gateways. */
async function fireAtBoth(count: number, key: CreatedKey, path: string, body: unknown): Promise<Outcome[]> {
  const call = async (gateway: GatewayProcess): Promise<Outcome> => {
    const sentToMidnight = secondsToUtcMidnight();
    const res = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const toMidnight = secondsToUtcMidnight();
    if (res.status === 200)
      return { status: 200, body: (await res.json()) as Record<string, unknown>, sentToMidnight, toMidnight };
    const error = await errorOf(res);
    return {
      status: res.status,
      body: {},
      code: error.code,
      param: error.param,
      retryAfter: Number(res.headers.get('retry-after')),
      sentToMidnight,
      toMidnight,
    };
  };
  return Promise.all(Array.from({ length: count }, (_, i) => call(stack.gateways[i % 2]!)));
}

function assertRefusals(outcomes: Outcome[], meter: string): void {
  for (const refused of outcomes.filter((o) => o.status !== 200)) {
    assert.equal(refused.status, 429, JSON.stringify(refused));
    assert.equal(refused.code, 'quota_exceeded');
    assert.equal(refused.param, meter);
    assert.ok(Number.isInteger(refused.retryAfter), `Retry-After ${refused.retryAfter}`);
    // Seconds to the end of the UTC day at the refusal, which came between sending and answer.
    assert.ok(
      refused.retryAfter! >= refused.toMidnight - 2 && refused.retryAfter! <= refused.sentToMidnight + 2,
      `Retry-After ${refused.retryAfter}; ${refused.sentToMidnight} s to the end of the UTC day when ` +
        `sent, ${refused.toMidnight} s when answered`,
    );
  }
}

/** The key's quota events of `meter`, once no more arrive for a moment. */
async function eventsOf(key: CreatedKey, meter: string): Promise<string[]> {
  const mine = () => events.filter((e) => e.key_id === key.id && e.meter === meter);
  await until(
    () => mine().some((e) => e.subject === 'exceeded'),
    `usage.quota.exceeded for ${meter}`,
    10_000,
  );
  await sleep(1000);
  return mine()
    .map((e) => e.subject)
    .sort();
}

test('20 image calls at once over two gateways, quota 7 images a day: exactly 7 made, 13 refused', async () => {
  const key = await createKeyWithQuotas(stack.gateway, { images: { limit: 7, period: 'day' } });
  const outcomes = await fireAtBoth(20, key, '/generate-image', {
    prompt: 'a lighthouse',
    width: 64,
    height: 64,
    steps: 1,
  });
  assert.equal(
    outcomes.filter((o) => o.status === 200).length,
    7,
    JSON.stringify(outcomes.map((o) => o.status)),
  );
  assert.equal(outcomes.filter((o) => o.status === 429).length, 13);
  assertRefusals(outcomes, 'images');

  const expected = {
    [`diffusion/${diffusionModel}/images`]: 7,
    [`diffusion/${diffusionModel}/megapixel_steps`]: (7 * 64 * 64) / 1e6,
  };
  // The same on both replicas: one store.
  await untilTotals(() => usageAroundToday(stack.gateways[0]!, key.key), expected);
  await untilTotals(() => usageAroundToday(stack.gateways[1]!, key.key), expected, 0);

  assert.deepEqual(await eventsOf(key, 'images'), ['exceeded', 'warning']);
  const exceeded = events.find((e) => e.key_id === key.id && e.subject === 'exceeded')!;
  assert.deepEqual([exceeded.limit, exceeded.period], [7, 'day']);

  // Still refused afterwards, and the exceeded event is not published again this period.
  const again = await fireAtBoth(2, key, '/generate-image', { prompt: 'x', width: 64, height: 64, steps: 1 });
  assert.deepEqual(
    again.map((o) => o.status),
    [429, 429],
  );
  assert.deepEqual(await eventsOf(key, 'images'), ['exceeded', 'warning']);
});

test('output_tokens reserved up to max_tokens: 20 calls at once never settle past the quota', async () => {
  const limit = 100;
  const maxTokens = 16;
  const key = await createKeyWithQuotas(stack.gateway, { output_tokens: { limit, period: 'day' } });
  const outcomes = await fireAtBoth(20, key, '/query', {
    prompt: 'Once upon a time',
    max_tokens: maxTokens,
    temperature: 0,
  });
  const served = outcomes.filter((o) => o.status === 200);
  assertRefusals(outcomes, 'output_tokens');
  const generated = served.map((o) => (o.body.usage as { completion_tokens: number }).completion_tokens);
  // The tiny model never stops early: each call uses all it reserved, so ⌊100 / 16⌋ calls fit.
  assert.deepEqual(
    generated,
    Array.from({ length: Math.floor(limit / maxTokens) }, () => maxTokens),
  );
  const inputTokens = served.reduce(
    (sum, o) => sum + (o.body.usage as { prompt_tokens: number }).prompt_tokens,
    0,
  );
  const seen = await untilTotals(() => usageAroundToday(stack.gateways[1]!, key.key), {
    [`llm/${llmModel}/requests`]: served.length,
    [`llm/${llmModel}/input_tokens`]: inputTokens,
    [`llm/${llmModel}/output_tokens`]: generated.reduce((a, b) => a + b, 0),
  });
  assert.ok(seen[`llm/${llmModel}/output_tokens`]! <= limit);
  assert.deepEqual(await eventsOf(key, 'output_tokens'), ['exceeded', 'warning']);
});
