// The OpenAI-compatible API (/v1) through the official `openai` npm client, pointed at a real
// gateway with a key, over a real llm worker running the trained stories260K of the published
// model files beside the checkout: the model list, completions JSON and streamed (exactly the
// model's published greedy reference), OpenAI's error classes for our 400/401/429, and a client
// abort that stops the worker's generation. Without the published files the worker runs the
// random-weight development model instead: what needs the trained one skips, naming the folder,
// and the model list and the error classes are still checked.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { createKey, type CreatedKey } from '../support/admin.js';
import { type ModelStack, sleep, startLlmStack } from '../support/stack.js';
import { needsPublishedModels } from '../support/shared-models.js';
import { sharedModelRepository } from '../support/worker.js';

const needsModels = { skip: needsPublishedModels('llm', 'stories260K') };
const published = needsModels.skip === false;
const MODEL = published ? 'stories260K' : 'tiny-llama-dev';
const PROMPT = 'Once upon a time';
// The reference published with the model: 48 greedy tokens after PROMPT (5 prompt tokens).
const REFERENCE =
  ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball. She wanted to play with it,';
const USAGE = { prompt_tokens: 5, completion_tokens: 48, total_tokens: 53 };

let llm: ModelStack;
let key: CreatedKey;
let client: OpenAI;

before(async () => {
  llm = await startLlmStack(published ? { repository: () => sharedModelRepository(`llm/${MODEL}`) } : {});
  key = await createKey(llm.stack.gateway, { rate_limit_per_minute: 100_000 });
  client = new OpenAI({ apiKey: key.key, baseURL: `${llm.stack.gateway.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await llm?.stop();
});

test('models.list: every ready model in OpenAI list shape; models.retrieve reads one', async () => {
  const page = await client.models.list();
  const ids = page.data.map((m) => m.id);
  assert.deepEqual(ids, [MODEL]);
  const model = page.data[0]!;
  assert.equal(model.object, 'model');
  assert.equal(model.owned_by, 'switchboard');
  assert.ok(Number.isInteger(model.created) && model.created > 1_600_000_000);
  assert.deepEqual(await client.models.retrieve(MODEL), model);
  await assert.rejects(client.models.retrieve('no-such-model'), (error: unknown) => {
    assert.ok(error instanceof OpenAI.NotFoundError);
    assert.equal(error.code, 'not_found');
    return true;
  });
});

test(
  'completions.create: exactly the reference continuation, in OpenAI completion shape',
  needsModels,
  async () => {
    const completion = await client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
    });
    assert.match(completion.id, /^cmpl-/);
    assert.equal(completion.object, 'text_completion');
    assert.equal(completion.model, MODEL);
    assert.equal(completion.choices.length, 1);
    assert.deepEqual(completion.choices[0], {
      text: REFERENCE,
      index: 0,
      logprobs: null,
      finish_reason: 'length',
    });
    assert.deepEqual(completion.usage, USAGE);
    // A prompt given as an array of one string is the same request.
    const again = await client.completions.create({
      model: MODEL,
      prompt: [PROMPT],
      max_tokens: 48,
      temperature: 0,
    });
    assert.equal(again.choices[0]!.text, REFERENCE);
  },
);

test(
  'a streamed completion: chunks that join to the reference, a finish chunk, a usage chunk, then [DONE]',
  needsModels,
  async () => {
    const stream = await client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const usageChunk = chunks.at(-1)!;
    assert.deepEqual(usageChunk.choices, []);
    assert.deepEqual(usageChunk.usage, USAGE);
    const finish = chunks.at(-2)!;
    assert.equal(finish.choices[0]!.finish_reason, 'length');
    const pieces = chunks.slice(0, -2);
    assert.ok(pieces.length > 10, 'streamed piece by piece');
    for (const chunk of pieces) {
      assert.equal(chunk.object, 'text_completion');
      assert.equal(chunk.model, MODEL);
      assert.equal(chunk.id, usageChunk.id, 'one id for the whole stream');
      assert.equal(chunk.choices[0]!.finish_reason, null);
    }
    assert.equal(pieces.map((c) => c.choices[0]!.text).join(''), REFERENCE);

    // Without include_usage there is no usage chunk: the finish chunk is the last.
    const plain = await client.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: 8,
      stream: true,
    });
    const raw = await fetch(`${client.baseURL}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: PROMPT, max_tokens: 4, stream: true }),
    });
    assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok((await raw.text()).endsWith('data: [DONE]\n\n'), 'the stream ends with data: [DONE]');
    const plainChunks: OpenAI.Completion[] = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    assert.equal(plainChunks.at(-1)!.choices[0]!.finish_reason, 'length');
  },
);

test('400s surface as BadRequestError naming the param; 401 as AuthenticationError', async () => {
  const badRequest = async (body: Record<string, unknown>, param: string) =>
    assert.rejects(
      client.completions.create({
        model: MODEL,
        prompt: PROMPT,
        ...body,
      } as OpenAI.CompletionCreateParamsNonStreaming),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.status, 400);
        assert.equal(error.param, param);
        assert.equal(error.code, 'invalid_request');
        assert.equal(error.type, 'invalid_request_error');
        assert.ok(error.requestID, 'the request id comes through');
        return true;
      },
    );
  await badRequest({ n: 2 }, 'n');
  await badRequest({ echo: true }, 'echo');
  await badRequest({ logprobs: 3 }, 'logprobs');
  await badRequest({ temperature: 3 }, 'temperature');
  await badRequest({ prompt: ['one', 'two'] }, 'prompt');
  await badRequest({ max_tokens: 100_000 }, 'max_tokens');
  await assert.rejects(
    client.completions.create({ model: 'no-such-model', prompt: PROMPT }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && error.code === 'unknown_model',
  );

  const stranger = new OpenAI({ apiKey: 'sb_nope_nope', baseURL: client.baseURL, maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.AuthenticationError, String(error));
    assert.equal(error.code, 'unauthorized');
    assert.equal(error.type, 'authentication_error');
    return true;
  });
  // Not found under /v1 is in OpenAI's shape too.
  const res = await fetch(`${client.baseURL}/nothing-here`, {
    headers: { authorization: `Bearer ${key.key}` },
  });
  assert.equal(res.status, 404);
  const body = (await res.json()) as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'request_id', 'type']);
  assert.equal(body.error.code, 'not_found');
  assert.equal(body.error.request_id, res.headers.get('x-request-id'));
});

test("a 429's Retry-After is honoured by the client's own retries; when they run out, RateLimitError", async () => {
  const limitedKey = await createKey(llm.stack.gateway, { rate_limit_per_minute: 1 });
  // The limiter's counter for this key in the stack's Redis (RATE_LIMIT_PREFIX's default).
  const counter = `sb:rl:key:${limitedKey.id}`;
  const { user, password } = llm.stack.redis.credentials('operator');
  const redis = new Redis(llm.stack.redis.url, { username: user, password });
  const attempts: { at: number; status: number; retryAfter: number }[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    attempts.push({
      at: Date.now(),
      status: res.status,
      retryAfter: Number(res.headers.get('retry-after')),
    });
    return res;
  };
  const limited = new OpenAI({
    apiKey: limitedKey.key,
    baseURL: client.baseURL,
    maxRetries: 1,
    fetch: recordingFetch,
  });
  try {
    // Spend the minute, then move its end near: the next call is refused with a Retry-After of
    // about a second, which the client waits out (it ignores values of 60 s or more) before its
    // one retry, which a fresh window admits.
    await limited.models.list();
    assert.equal(await redis.pexpire(counter, 1200), 1, 'the counter exists under its documented key');
    attempts.length = 0;
    await limited.models.list();
    assert.deepEqual(
      attempts.map((a) => a.status),
      [429, 200],
    );
    const [refused, admitted] = attempts as [(typeof attempts)[0], (typeof attempts)[0]];
    assert.ok(refused.retryAfter >= 1 && refused.retryAfter <= 2, `Retry-After ${refused.retryAfter}`);
    assert.ok(admitted.at - refused.at >= refused.retryAfter * 1000 - 50, 'the retry waited for Retry-After');

    // Another caller on the same key spends each new window as soon as it opens: the retry is
    // refused too, and the client gives up with RateLimitError carrying our code.
    await redis.set(counter, '5', 'PX', 1200);
    attempts.length = 0;
    const keepSpent = setInterval(() => void redis.set(counter, '5', 'PX', 1200, 'NX'), 100);
    try {
      await assert.rejects(limited.models.list(), (error: unknown) => {
        assert.ok(error instanceof OpenAI.RateLimitError, String(error));
        assert.equal(error.code, 'rate_limited');
        assert.equal(error.type, 'rate_limit_error');
        return true;
      });
    } finally {
      clearInterval(keepSpent);
    }
    assert.deepEqual(
      attempts.map((a) => a.status),
      [429, 429],
    );
    assert.ok(attempts[1]!.at - attempts[0]!.at >= attempts[0]!.retryAfter * 1000 - 50);
  } finally {
    redis.disconnect();
  }
});

test(
  "the client's AbortController cancelling a stream stops generation on the worker",
  needsModels,
  async () => {
    const { worker } = llm;
    const cancelledBefore = await worker.metric('llm_generations_cancelled_total');
    const abort = new AbortController();
    const stream = await client.completions.create(
      { model: MODEL, prompt: PROMPT, max_tokens: 500, temperature: 0, stream: true },
      { signal: abort.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next(); // the first chunk: generation is running
    const tokensAtCancel = await worker.metric('llm_tokens_generated_total');
    abort.abort();
    // The client ends an aborted stream quietly (or with its abort error); either way, no more chunks.
    await (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next());
    })().catch(() => undefined);
    let cancelled = cancelledBefore;
    for (let i = 0; i < 100 && cancelled === cancelledBefore; i++) {
      await sleep(20);
      cancelled = await worker.metric('llm_generations_cancelled_total');
    }
    assert.equal(cancelled, cancelledBefore + 1, 'the worker counted a cancelled generation');
    const tokensAfterCancel = await worker.metric('llm_tokens_generated_total');
    assert.ok(tokensAfterCancel - tokensAtCancel < 500, 'it stopped before max_tokens');
  },
);

test(
  'chat.completions on a model without a chat template: BadRequestError with param model',
  needsModels,
  async () => {
    for (const stream of [false, true]) {
      await assert.rejects(
        client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream }),
        (error: unknown) => {
          assert.ok(error instanceof OpenAI.BadRequestError, String(error));
          assert.equal(error.param, 'model');
          assert.match(error.message, /template/i);
          return true;
        },
      );
    }
  },
);
