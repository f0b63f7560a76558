// Continuous batching through the whole path — gateway, gRPC, a real llm worker on the trained
// TinyStories-656K of the published model files beside the checkout with its default LLM_MAX_BATCH — : concurrent streams of
// mixed prompts and lengths decode together in one batch, and each one's text is exactly the one
// it gives alone; a stream cancelled by its client leaves the batch without touching the others.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { readSse } from '../support/sse.js';
import { type ModelStack, startLlmStack } from '../support/stack.js';
import { needsPublishedModels } from '../support/shared-models.js';
import { sharedModelRepository } from '../support/worker.js';

const MODEL = 'TinyStories-656K';
const needsModels = { skip: needsPublishedModels('llm', MODEL) };

let llm: ModelStack;
let key: CreatedKey;

before(async () => {
  if (needsModels.skip !== false) return;
  llm = await startLlmStack({ repository: () => sharedModelRepository(`llm/${MODEL}`) });
  key = await createKey(llm.stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 100_000 });
});
after(async () => {
  await llm?.stop();
});

const bodies = [
  { prompt: 'Once upon a time', max_tokens: 48 },
  { prompt: 'Tom and his dog went to the park. They played with a red ball until', max_tokens: 64 },
  { prompt: 'Lily', max_tokens: 96 },
  { prompt: 'The little bird', max_tokens: 8 },
  { prompt: 'One day, Sam found a box', max_tokens: 40, temperature: 0.9, seed: 11 },
];

const query = (body: object, signal?: AbortSignal) =>
  fetch(`${llm.stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, temperature: 0, ...body, stream: true }),
    signal,
  });

/** The streamed text and finish reason of one request. */
async function streamed(body: object): Promise<{ text: string; finish: string; tokens: number }> {
  const sse = await readSse(await query(body));
  assert.equal(sse.status, 200, sse.raw);
  const events = sse.data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, unknown>);
  const done = events.at(-1) as { finish_reason: string; usage: { completion_tokens: number } };
  return {
    text: events.map((e) => (e.delta as string | undefined) ?? '').join(''),
    finish: done.finish_reason,
    tokens: done.usage.completion_tokens,
  };
}

/** How many model passes ran with more than one generation in them. */
async function batchedSteps(): Promise<number> {
  const { worker } = llm;
  const all = await worker.metric('llm_batch_size_count', { model: MODEL });
  const single = await worker.metric('llm_batch_size_bucket', { model: MODEL, le: '1' });
  return all - single;
}

test('concurrent streams decode in one batch, each exactly as it decodes alone', needsModels, async () => {
  const alone = [];
  for (const body of bodies) alone.push(await streamed(body));
  assert.equal(await batchedSteps(), 0, 'one at a time, every pass had one row');
  const together = await Promise.all(bodies.map((body) => streamed(body)));
  assert.deepEqual(together, alone);
  assert.ok((await batchedSteps()) > 0, 'passes ran with several rows');
});

test('a stream its client cancels leaves the batch; the others finish unchanged', needsModels, async () => {
  const alone = [];
  for (const body of bodies.slice(0, 3)) alone.push(await streamed(body));
  const cancelledBefore = await llm.worker.metric('llm_generations_cancelled_total');
  const abort = new AbortController();
  const doomed = (async () => {
    const res = await query({ prompt: 'A big red', max_tokens: 400 }, abort.signal);
    const reader = res.body!.getReader();
    await reader.read(); // the stream is flowing: it is in the batch
    abort.abort();
  })();
  const together = await Promise.all(bodies.slice(0, 3).map((body) => streamed(body)));
  await doomed;
  assert.deepEqual(together, alone);
  let cancelled = cancelledBefore;
  for (let i = 0; i < 100 && cancelled === cancelledBefore; i++) {
    await new Promise((r) => setTimeout(r, 20));
    cancelled = await llm.worker.metric('llm_generations_cancelled_total');
  }
  assert.equal(cancelled, cancelledBefore + 1);
});
