// The completion service's observability on a tiny random Llama: what one generation adds to the
// metrics (end-to-end latency, queue time, prefill, prompt tokens, the KV cache against its
// budget), and its spans — waiting, prompt reading, decoding — each a child of the call that
// submitted it, even when the batch that serves it was started by another call.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { CompleteChunk, CompleteRequest__Output } from '@switchboard/contracts';
import { useLocalModels, type ModelRegistry } from '@switchboard/models';
import { buildTinyLlama } from '@switchboard/models-dev';
import { withSpan } from '@switchboard/telemetry';
import { captureSpans } from '@switchboard/telemetry/test-support';
import { Registry } from 'prom-client';
import { loadCausalLm } from '../adapters/causal-lm.js';
import type { DecodeLoopLimits } from '../generation/decode-loop.js';
import type { LanguageModel } from '../generation/model.js';
import { createLlmMetrics } from '../metrics.js';
import { CompletionService } from './service.js';

const MODEL = 'tiny';
const root = await mkdtemp(join(tmpdir(), 'llm-service-'));
after(() => rm(root, { recursive: true, force: true }));
await buildTinyLlama(join(root, MODEL), { seed: 0 });
useLocalModels(root);
const model = await loadCausalLm(
  { id: MODEL, dir: join(root, MODEL), description: '' },
  { providers: ['cpu'], deviceId: 0, intraOpThreads: 1 },
);
after(() => model.dispose());

const limits: DecodeLoopLimits = {
  maxBatch: 4,
  cacheTokens: 2048,
  prefillChunkTokens: 64,
  queueDepth: 4,
  streamBufferEvents: 256,
};

/** The one model, whatever is asked for. */
const registry = {
  get: () => ({ id: MODEL, handle: model }),
} as unknown as ModelRegistry<LanguageModel>;

function request(prompt: string, maxTokens: number): CompleteRequest__Output {
  return { prompt, model: MODEL, temperature: 0, stop: [], messages: [], max_tokens: maxTokens };
}

function setup() {
  const promRegistry = new Registry();
  const metrics = createLlmMetrics(promRegistry);
  return { service: new CompletionService(registry, limits, metrics), promRegistry };
}

async function value(promRegistry: Registry, name: string): Promise<number> {
  const metric = await promRegistry.getMetricsAsJSON();
  const sample = metric
    .flatMap((m) =>
      m.values.map((v) => ({ ...v, name: (v as { metricName?: string }).metricName ?? m.name })),
    )
    .find((v) => v.name === name && v.labels['model'] === MODEL);
  assert.ok(sample, `${name}{model="${MODEL}"} exists`);
  return sample.value;
}

test('one generation moves the latency, queue, prefill, prompt token and KV cache metrics', async () => {
  const { service, promRegistry } = setup();
  const cacheWhileRunning: number[] = [];
  let done: CompleteChunk['done'];
  for await (const chunk of service.stream(request('Once upon a time', 16), new AbortController().signal)) {
    if (chunk.done) done = chunk.done;
    else cacheWhileRunning.push(await value(promRegistry, 'llm_kv_cache_tokens'));
  }
  const promptTokens = done?.usage?.prompt_tokens;
  assert.ok(promptTokens, 'the generation reports its prompt tokens');
  assert.equal(await value(promRegistry, 'llm_e2e_request_latency_seconds_count'), 1);
  assert.equal(await value(promRegistry, 'llm_queue_time_seconds_count'), 1);
  assert.equal(await value(promRegistry, 'llm_prefill_seconds_count'), 1);
  assert.equal(await value(promRegistry, 'llm_prompt_tokens_total'), promptTokens);
  assert.ok(
    cacheWhileRunning.some((tokens) => tokens >= promptTokens),
    `the cache held the prompt while generating: ${cacheWhileRunning.join(', ')}`,
  );
  assert.equal(await value(promRegistry, 'llm_kv_cache_tokens'), 0, 'all of it given back at the end');
  assert.equal(await value(promRegistry, 'llm_kv_cache_budget_tokens'), limits.cacheTokens);
});

test('queue, prefill and decode spans belong to the call that submitted each request', async () => {
  const spans = captureSpans();
  const { service } = setup();
  const signal = new AbortController().signal;
  let firstStarted!: () => void;
  const firstRunning = new Promise<void>((resolve) => (firstStarted = resolve));

  /** One call: its span id, and what its generation reported at the end. */
  const call = (name: string, prompt: string, onChunk: () => void) =>
    withSpan('test', name, {}, async (span) => {
      let done: CompleteChunk['done'];
      for await (const chunk of service.stream(request(prompt, 24), signal)) {
        onChunk();
        if (chunk.done) done = chunk.done;
      }
      return { spanId: span.spanContext().spanId, traceId: span.spanContext().traceId, done: done! };
    });
  const first = call('first call', 'Once upon a time', () => firstStarted());
  // The second joins the loop that the first call's context started.
  await firstRunning;
  const second = call('second call', 'The little dog', () => {});
  const calls = await Promise.all([first, second]);

  for (const phase of ['llm.queue', 'llm.prefill', 'llm.decode']) {
    const recorded = spans.named(phase);
    assert.equal(recorded.length, 2, `one ${phase} span per request`);
    for (const { spanId, traceId } of calls) {
      const own = recorded.filter((span) => span.parentSpanId === spanId);
      assert.equal(own.length, 1, `${phase} is a child of its own call`);
      assert.equal(own[0]!.traceId, traceId);
    }
  }
  for (const { spanId, done } of calls) {
    const decode = spans.named('llm.decode').find((span) => span.parentSpanId === spanId)!;
    assert.equal(decode.attributes['llm.completion_tokens'], done.usage?.completion_tokens);
    assert.equal(decode.attributes['llm.finish_reason'], done.finish_reason);
  }
});

test('a cancelled generation ends its open span as cancelled and gives its cache back', async () => {
  const spans = captureSpans();
  const { service, promRegistry } = setup();
  const controller = new AbortController();
  await assert.rejects(async () => {
    for await (const chunk of service.stream(request('Once upon a time', 64), controller.signal)) {
      if (chunk.delta !== undefined) controller.abort(new Error('caller went away'));
    }
  });
  const decode = spans.named('llm.decode');
  assert.equal(decode.length, 1);
  assert.equal(decode[0]!.attributes['llm.cancelled'], true);
  // The loop takes the cancelled row out before its next step.
  for (let i = 0; i < 100 && (await value(promRegistry, 'llm_kv_cache_tokens')) > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(await value(promRegistry, 'llm_kv_cache_tokens'), 0);
});
