// POST /v1/chat/completions through the official `openai` npm client, pointed at a real gateway
// over a real llm worker running the tiny development Llama (which carries a ChatML template;
// its words are noise, so the checks are on shapes): the messages rendered by the worker, JSON
// and streamed (role first, then content, then finish_reason, then usage when asked).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { createKey } from '../support/admin.js';
import { type ModelStack, startLlmStack } from '../support/stack.js';

let llm: ModelStack;
let client: OpenAI;

before(async () => {
  llm = await startLlmStack();
  const key = await createKey(llm.stack.gateway, { rate_limit_per_minute: 10_000 });
  client = new OpenAI({ apiKey: key.key, baseURL: `${llm.stack.gateway.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await llm?.stop();
});

const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
  { role: 'user', content: 'Tell me a story.' },
  { role: 'assistant', content: 'Once' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Go on' },
      { type: 'text', text: 'please.' },
    ],
  },
];

test('a chat completion: the assistant message, finish_reason and usage', async () => {
  const model = llm.repo.modelId;
  const chat = await client.chat.completions.create({
    model,
    messages,
    max_completion_tokens: 6,
    temperature: 0,
    seed: 1,
    response_format: { type: 'text' },
  });
  assert.match(chat.id, /^chatcmpl-/);
  assert.equal(chat.object, 'chat.completion');
  assert.equal(chat.model, model);
  assert.equal(chat.choices.length, 1);
  assert.equal(chat.choices[0]!.message.role, 'assistant');
  assert.equal(typeof chat.choices[0]!.message.content, 'string');
  assert.equal(chat.choices[0]!.finish_reason, 'length');
  assert.equal(chat.usage?.completion_tokens, 6);
  assert.ok(chat.usage.prompt_tokens > 20, 'the template wrapped every message');
});

test('a streamed chat completion: role, then content pieces, then finish_reason, then usage', async () => {
  const model = llm.repo.modelId;
  const whole = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
  const stream = await client.chat.completions.create({
    model,
    messages,
    max_tokens: 8,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(chunk.id, chunks[0]!.id);
  }
  assert.deepEqual(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
  const usage = chunks.at(-1)!;
  assert.deepEqual(usage.choices, []);
  assert.deepEqual(usage.usage, whole.usage);
  const finish = chunks.at(-2)!;
  assert.equal(finish.choices[0]!.finish_reason, 'length');
  const pieces = chunks.slice(1, -2);
  for (const piece of pieces) {
    assert.equal(piece.choices[0]!.finish_reason, null);
    assert.equal(piece.choices[0]!.delta.role, undefined);
  }
  assert.equal(pieces.map((p) => p.choices[0]!.delta.content).join(''), whole.choices[0]!.message.content);
});

test('unsupported chat features are BadRequestError naming the param', async () => {
  const model = llm.repo.modelId;
  for (const [body, param] of [
    [{ n: 2 }, 'n'],
    [{ response_format: { type: 'json_object' } }, 'response_format.type'],
    [{ messages: [{ role: 'tool', content: 'x', tool_call_id: '1' }] }, 'messages.0.role'],
    [{ messages: [] }, 'messages'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
  ] as const) {
    await assert.rejects(
      client.chat.completions.create({
        model,
        messages,
        ...body,
      } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, `${JSON.stringify(body)}: ${String(error)}`);
        assert.equal(error.param, param);
        return true;
      },
    );
  }
});
