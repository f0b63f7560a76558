// A stream whose request waits in the worker's queue: the gateway commits to the 200 stream after
// STREAM_FIRST_EVENT_WAIT_MS and keeps it open with `: ping` comments (SSE comments), so proxies do
// not cut it, and the completion still arrives in full.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { readSse } from '../support/sse.js';
import { type ModelStack, type Stack, startLlmStack } from '../support/stack.js';

let llm: ModelStack;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  llm = await startLlmStack({
    workerEnv: { LLM_MAX_BATCH: '1' },
    gatewayEnv: { STREAM_PING_INTERVAL_MS: '100', STREAM_FIRST_EVENT_WAIT_MS: '50' },
  });
  ({ stack } = llm);
  key = await createKey(stack.gateway, { rate_limit_per_minute: 1000 });
});
after(async () => {
  await llm?.stop();
});

const query = (body: unknown) =>
  fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('a queued stream starts, gets pings while it waits, then the whole completion', async () => {
  // Occupies the worker's only slot for a while (1500 tokens, one thread).
  const long = query({ prompt: 'Once upon a time', max_tokens: 1500, temperature: 0 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const queued = await query({ prompt: 'Hi', max_tokens: 5, temperature: 0, stream: true });
  assert.equal(queued.status, 200);
  assert.match(queued.headers.get('content-type') ?? '', /^text\/event-stream/);
  const sse = await readSse(queued);
  const firstPing = sse.raw.indexOf(': ping');
  assert.ok(firstPing !== -1, 'pings while waiting');
  assert.ok(firstPing < sse.raw.indexOf('data: '), 'the first ping comes before the first event');
  assert.equal(sse.data.at(-1), '[DONE]');
  const finish = JSON.parse(sse.data.at(-2)!) as {
    finish_reason: string;
    usage: { completion_tokens: number };
  };
  assert.equal(finish.finish_reason, 'length');
  assert.equal(finish.usage.completion_tokens, 5);
  assert.equal((await long).status, 200);
});
