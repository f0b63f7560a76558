// The llm meters through the gateway, on the native and the OpenAI-compatible surface, streamed and
// not: what GET /usage shows equals the usage each response reported, under the model that served
// it; a stream the client cuts counts what was generated (at least what it received, at most
// max_tokens). A real llm worker on the tiny development Llama, a real usage store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { readSse } from '../support/sse.js';
import { type ModelStack, startLlmStack } from '../support/stack.js';
import { untilTotals, untilUsage, usageAroundToday } from '../support/usage.js';

let llm: ModelStack;
let model: string;

before(async () => {
  llm = await startLlmStack();
  model = llm.repo.modelId;
});
after(async () => {
  await llm?.stop();
});

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const freshKey = () => createKey(llm.stack.gateway, { tier: 'enterprise', rate_limit_per_minute: null });

const post = (key: CreatedKey, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${llm.stack.gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

const usageOf = (key: CreatedKey) => () => usageAroundToday(llm.stack.gateway, key.key);

/** The totals that calls reporting `usages` must add up to. */
function expectedFor(usages: Usage[]): Record<string, number> {
  const sum = (pick: (u: Usage) => number) => usages.reduce((total, u) => total + pick(u), 0);
  return {
    [`llm/${model}/requests`]: usages.length,
    [`llm/${model}/input_tokens`]: sum((u) => u.prompt_tokens),
    [`llm/${model}/output_tokens`]: sum((u) => u.completion_tokens),
  };
}

test('/query, plain and streamed: the recorded tokens are the ones each response reported', async () => {
  const key = await freshKey();
  const plain = await post(key, '/query', { prompt: 'Once upon a time', max_tokens: 7, temperature: 0 });
  assert.equal(plain.status, 200);
  const plainUsage = ((await plain.json()) as { usage: Usage }).usage;
  assert.equal(plainUsage.completion_tokens, 7);

  const streamed = await readSse(
    await post(key, '/query', { prompt: 'A longer prompt than the first', max_tokens: 5, stream: true }),
  );
  assert.equal(streamed.status, 200);
  const finish = streamed.data
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as { usage?: Usage })
    .find((event) => event.usage !== undefined);
  assert.ok(finish?.usage, `a usage event: ${streamed.raw}`);
  assert.notEqual(finish.usage.prompt_tokens, plainUsage.prompt_tokens, 'two different prompts');

  await untilTotals(usageOf(key), expectedFor([plainUsage, finish.usage]));
});

test('/v1/chat/completions and /v1/completions, plain and streamed, count like /query', async () => {
  const key = await freshKey();
  const messages = [{ role: 'user', content: 'Tell me a story.' }];
  const chat = await post(key, '/v1/chat/completions', { model, messages, max_tokens: 6, temperature: 0 });
  assert.equal(chat.status, 200);
  const chatUsage = ((await chat.json()) as { usage: Usage }).usage;

  const chatStream = await readSse(
    await post(key, '/v1/chat/completions', {
      model,
      messages,
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  const chatStreamUsage = (JSON.parse(chatStream.data.at(-2)!) as { usage: Usage }).usage;
  assert.equal(chatStreamUsage.completion_tokens, 4);

  const completion = await post(key, '/v1/completions', { model, prompt: 'Hello', max_tokens: 3 });
  assert.equal(completion.status, 200);
  const completionUsage = ((await completion.json()) as { usage: Usage }).usage;

  // Without include_usage the client is told nothing, but the work is counted all the same.
  const quiet = await readSse(
    await post(key, '/v1/chat/completions', { model, messages, max_tokens: 2, stream: true }),
  );
  assert.equal(quiet.data.at(-1), '[DONE]');

  await untilTotals(
    usageOf(key),
    expectedFor([
      chatUsage,
      chatStreamUsage,
      completionUsage,
      // The same messages and template as the streamed chat: the same prompt tokens.
      { prompt_tokens: chatStreamUsage.prompt_tokens, completion_tokens: 2, total_tokens: 0 },
    ]),
  );
});

test('a stream the client cuts counts what was generated: ≥ the deltas received, ≤ max_tokens', async () => {
  const key = await freshKey();
  const prompt = 'Once upon a time';
  const reference = await post(key, '/query', { prompt, max_tokens: 1, temperature: 0 });
  const promptTokens = ((await reference.json()) as { usage: Usage }).usage.prompt_tokens;

  const maxTokens = 1500;
  const abort = new AbortController();
  // Greedy: a sampled continuation of the tiny development model may end within five tokens.
  const res = await post(
    key,
    '/query',
    { prompt, max_tokens: maxTokens, stream: true, temperature: 0 },
    abort.signal,
  );
  assert.equal(res.status, 200);
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  while ((raw.match(/"delta"/g) ?? []).length < 5) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before five deltas');
    raw += decoder.decode(value, { stream: true });
  }
  const received = (raw.match(/"delta"/g) ?? []).length;
  abort.abort();
  await reader.cancel().catch(() => undefined);

  const requests = (t: Record<string, number>) =>
    Object.entries(t).reduce((sum, [name, value]) => sum + (name.endsWith('/requests') ? value : 0), 0);
  const seen = await untilUsage(usageOf(key), (t) => requests(t) === 2, 'the cut stream recorded');
  assert.deepEqual(
    Object.keys(seen).sort(),
    ['input_tokens', 'output_tokens', 'requests'].map((meter) => `llm/${model}/${meter}`),
    'recorded under the model that generated it',
  );
  assert.equal(seen[`llm/${model}/input_tokens`], 2 * promptTokens);
  const cutOutput = seen[`llm/${model}/output_tokens`]! - 1;
  assert.ok(
    cutOutput >= received && cutOutput <= maxTokens,
    `the cut stream counted ${cutOutput} tokens; ${received} received, max ${maxTokens}`,
  );
  assert.ok(cutOutput < maxTokens, 'cut early, so not the whole reservation');
});
