// POST /query and GET /models through the real gateway to a real llm worker process running the
// tiny random-weight Llama on ONNX Runtime.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AutoTokenizer, env, type PreTrainedTokenizer } from '@huggingface/transformers';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { readSse } from '../support/sse.js';
import { errorOf, type ModelStack, sleep, type Stack, startLlmStack } from '../support/stack.js';
import type { TinyModelRepository, WorkerProcess } from '../support/worker.js';

let llm: ModelStack;
let repo: TinyModelRepository;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;
let tokenizer: PreTrainedTokenizer;
const CONTEXT = 2048; // the tiny model's max_position_embeddings

before(async () => {
  llm = await startLlmStack({ workerEnv: { LLM_MAX_BATCH: '1', LLM_QUEUE_DEPTH: '16' } });
  ({ worker, stack, repo } = llm);
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
  env.allowRemoteModels = false;
  env.localModelPath = `${repo.modelDir}/llm/`;
  tokenizer = await AutoTokenizer.from_pretrained(repo.modelId);
});
after(async () => {
  await llm?.stop();
});

interface Completion {
  id: string;
  object: string;
  created: number;
  model: string;
  text: string;
  finish_reason: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

const query = (body: unknown, signal?: AbortSignal) =>
  fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });

async function complete(body: Record<string, unknown>): Promise<Completion> {
  const res = await query(body);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Completion;
}

interface Streamed {
  contentType: string;
  events: Record<string, unknown>[];
  deltas: string[];
  final: { id: string; finish_reason: string; usage: Completion['usage']; model: string };
}

async function stream(body: Record<string, unknown>): Promise<Streamed> {
  const res = await query({ ...body, stream: true });
  assert.equal(res.status, 200);
  const sse = await readSse(res);
  assert.equal(sse.data.at(-1), '[DONE]', 'the stream ends with [DONE]');
  assert.ok(sse.raw.endsWith('data: [DONE]\n\n'), 'every event ends with a blank line');
  const events = sse.data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, unknown>);
  const deltas = events.filter((e) => 'delta' in e);
  deltas.forEach((e, i) => assert.equal(e.index, i, 'indexes count up from 0'));
  const final = events.at(-1) as Streamed['final'];
  assert.ok(final.finish_reason, 'the last event before [DONE] carries finish_reason');
  for (const e of events) assert.equal(e.id, final.id, 'one id for the whole stream');
  return { contentType: sse.contentType, events, deltas: deltas.map((e) => e.delta as string), final };
}

const PROMPT = 'Tell me a story';

test('non-streamed: response shape, usage from the tokenizer, finish_reason length at max_tokens', async () => {
  const done = await complete({ prompt: PROMPT, max_tokens: 12, temperature: 0 });
  assert.match(done.id, /^cmpl-[0-9a-f]{32}$/);
  assert.equal(done.object, 'text_completion');
  assert.ok(Math.abs(done.created - Date.now() / 1000) < 60);
  assert.equal(done.model, repo.modelId);
  assert.equal(typeof done.text, 'string');
  assert.ok(done.text.length > 0);
  assert.equal(done.finish_reason, 'length');
  const promptTokens = tokenizer.encode(PROMPT).length;
  assert.deepEqual(done.usage, {
    prompt_tokens: promptTokens,
    completion_tokens: 12,
    total_tokens: promptTokens + 12,
  });
});

test('temperature 0 twice → identical; same seed at 0.9 → identical; other seeds → different', async () => {
  const greedy = [
    await complete({ prompt: PROMPT, max_tokens: 40, temperature: 0 }),
    await complete({ prompt: PROMPT, max_tokens: 40, temperature: 0 }),
  ];
  assert.equal(greedy[0]!.text, greedy[1]!.text);
  const seeded = [
    await complete({ prompt: PROMPT, max_tokens: 40, temperature: 0.9, seed: 7 }),
    await complete({ prompt: PROMPT, max_tokens: 40, temperature: 0.9, seed: 7 }),
  ];
  assert.equal(seeded[0]!.text, seeded[1]!.text);
  const others = await Promise.all(
    [8, 9, 10].map((seed) => complete({ prompt: PROMPT, max_tokens: 40, temperature: 0.9, seed })),
  );
  for (const other of others) assert.notEqual(other.text, seeded[0]!.text);
  assert.notEqual(seeded[0]!.text, greedy[0]!.text);
});

test('streamed: SSE framing, deltas concatenate byte for byte to the non-streamed text, no broken characters', async () => {
  const body = { prompt: PROMPT, max_tokens: 120, temperature: 0 };
  const [whole, streamed] = [await complete(body), await stream(body)];
  assert.match(streamed.contentType, /^text\/event-stream/);
  assert.equal(streamed.deltas.join(''), whole.text);
  assert.deepEqual(Buffer.from(streamed.deltas.join('')), Buffer.from(whole.text));
  assert.ok(streamed.deltas.length > 5, 'pieces are streamed as they come, not in one event');
  assert.equal(streamed.final.finish_reason, 'length');
  assert.deepEqual(streamed.final.usage, whole.usage);
  assert.equal(streamed.final.model, repo.modelId);
  // A U+FFFD in a delta must be one the final text has at that position (the random model does
  // produce invalid UTF-8), never half of a character split across events.
  let at = 0;
  for (const delta of streamed.deltas) {
    assert.ok(delta.length > 0);
    for (let i = 0; i < delta.length; i++)
      if (delta[i] === '\uFFFD') assert.equal(whole.text[at + i], '\uFFFD');
    at += delta.length;
  }
});

test('stop strings end the text before them with finish_reason stop', async () => {
  const { text } = await complete({ prompt: PROMPT, max_tokens: 80, temperature: 0 });
  const stop = text.slice(20, 23);
  const stopped = await complete({
    prompt: PROMPT,
    max_tokens: 80,
    temperature: 0,
    stop: [stop, 'never-there'],
  });
  assert.equal(stopped.finish_reason, 'stop');
  assert.equal(stopped.text, text.slice(0, text.indexOf(stop)));
  const streamed = await stream({ prompt: PROMPT, max_tokens: 80, temperature: 0, stop });
  assert.equal(streamed.deltas.join(''), stopped.text);
});

test('a client that disconnects mid-stream stops the generation; the next request is served at once', async () => {
  const cancelledBefore = await worker.metric('llm_generations_cancelled_total');
  const abort = new AbortController();
  const res = await query({ prompt: PROMPT, max_tokens: 2000, temperature: 0, stream: true }, abort.signal);
  const reader = res.body!.getReader();
  await reader.read(); // the first event: generation is running
  const tokensAtCancel = await worker.metric('llm_tokens_generated_total');
  abort.abort();
  let cancelled = cancelledBefore;
  for (let i = 0; i < 50 && cancelled === cancelledBefore; i++) {
    await sleep(20);
    cancelled = await worker.metric('llm_generations_cancelled_total');
  }
  assert.equal(cancelled, cancelledBefore + 1, 'the worker counted a cancelled generation');
  const tokensAfterCancel = await worker.metric('llm_tokens_generated_total');
  assert.ok(tokensAfterCancel - tokensAtCancel < 1000, 'it stopped long before max_tokens');
  await sleep(100);
  assert.equal(
    await worker.metric('llm_tokens_generated_total'),
    tokensAfterCancel,
    'and generates nothing more',
  );
  const started = performance.now();
  const next = await complete({ prompt: PROMPT, max_tokens: 5, temperature: 0 });
  assert.equal(next.usage.completion_tokens, 5);
  assert.ok(performance.now() - started < 1000, 'the slot was free at once');
});

test('defaults: max_tokens omitted = min(2048, context − prompt), temperature omitted = 0.7', async () => {
  const done = await complete({ prompt: PROMPT, temperature: 0 });
  const room = Math.min(2048, CONTEXT - done.usage.prompt_tokens);
  if (done.finish_reason === 'length') assert.equal(done.usage.completion_tokens, room);
  else assert.ok(done.usage.completion_tokens <= room);
  assert.equal(done.finish_reason, 'length', 'greedy on this prompt never picks EOS');
  const implicit = await complete({ prompt: PROMPT, max_tokens: 30, seed: 99 });
  const explicit = await complete({ prompt: PROMPT, max_tokens: 30, seed: 99, temperature: 0.7 });
  const hotter = await complete({ prompt: PROMPT, max_tokens: 30, seed: 99, temperature: 1.5 });
  assert.equal(implicit.text, explicit.text);
  assert.notEqual(implicit.text, hotter.text);
});

test('validation: 400 with param, unknown_model, invalid_json', async () => {
  const cases: [unknown, string, string | undefined][] = [
    [{ prompt: '' }, 'invalid_request', 'prompt'],
    [{ prompt: 42 }, 'invalid_request', 'prompt'],
    [{ prompt: 'x', temperature: -0.1 }, 'invalid_request', 'temperature'],
    [{ prompt: 'x', temperature: 2.1 }, 'invalid_request', 'temperature'],
    [{ prompt: 'x', max_tokens: 0 }, 'invalid_request', 'max_tokens'],
    [{ prompt: 'x', max_tokens: 1e9 }, 'invalid_request', 'max_tokens'],
    [{ prompt: 'x', max_tokens: CONTEXT }, 'invalid_request', 'max_tokens'],
    [{ prompt: 'x', model: 'no-such-model' }, 'unknown_model', 'model'],
    [{ prompt: 'x', model: 'no-such-model', stream: true }, 'unknown_model', 'model'],
    ['{"prompt": "x",', 'invalid_json', undefined],
  ];
  for (const [body, code, param] of cases) {
    const res = await query(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    const error = await errorOf(res);
    assert.equal(error.code, code, JSON.stringify(body));
    assert.equal(error.param, param, JSON.stringify(body));
  }
  const res = await query({ prompt: 'x', max_tokens: 1e9 });
  assert.match((await errorOf(res)).message, /context/);
});

test('8 concurrent streams all complete correctly', async () => {
  const reference = await complete({ prompt: PROMPT, max_tokens: 60, temperature: 0 });
  const streams = await Promise.all(
    Array.from({ length: 8 }, () => stream({ prompt: PROMPT, max_tokens: 60, temperature: 0 })),
  );
  for (const s of streams) {
    assert.equal(s.deltas.join(''), reference.text);
    assert.deepEqual(s.final.usage, reference.usage);
  }
});

test('GET /models lists the model as ready and default, marked as a development model', async () => {
  const res = await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
  assert.equal(res.status, 200);
  const { data } = (await res.json()) as { data: Record<string, unknown>[] };
  const llm = data.filter((m) => m.capability === 'llm');
  assert.equal(llm.length, 1);
  assert.equal(llm[0]!.id, repo.modelId);
  assert.equal(llm[0]!.status, 'ready');
  assert.equal(llm[0]!.default, true);
  assert.match(String(llm[0]!.description), /random-weight development model/);
});

test('worker metrics: time to first token, inter-token latency, finish reasons, load time', async () => {
  const text = await (await fetch(worker.metricsUrl)).text();
  for (const name of [
    'llm_queue_depth',
    'llm_time_to_first_token_seconds_count',
    'llm_inter_token_latency_seconds_count',
    'llm_tokens_generated_total',
    'llm_model_load_seconds',
  ]) {
    assert.match(text, new RegExp(`^${name}`, 'm'), name);
  }
  assert.ok((await worker.metric('llm_requests_total', { finish_reason: 'length' })) > 0);
  assert.ok((await worker.metric('llm_requests_total', { finish_reason: 'stop' })) > 0);
  assert.ok((await worker.metric('llm_model_load_seconds', { status: 'ready' })) > 0);
});
