// Chat completions in the llm worker: a real worker process, called over gRPC as the
// gateway calls it, with two models in its repository — the tiny development Llama, whose
// tokenizer_config.json carries the ChatML chat template, and the real stories260K (from the
// published model files beside the checkout; its test skips, naming it, without them), which has
// no chat template. The prompt's token count is checked against Transformers.js's apply_chat_template
// (@huggingface/jinja over the model folder's own tokenizer_config.json) on the same folder.
import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AutoTokenizer, env } from '@huggingface/transformers';
import {
  Llm,
  type ChatMessage,
  type CompleteChunk__Output,
  type CompleteRequest,
  type LlmClient,
} from '@switchboard/contracts';
import { fromGrpcError, SwitchboardError } from '@switchboard/errors';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import type { ServiceError } from '@grpc/grpc-js';
import { testClusterSecret } from '../support/gateway.js';
import { needsPublishedModels, publishedModelPath } from '../support/shared-models.js';
import {
  startWorker,
  tinyLlmRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

const TINY = 'tiny-llama-dev';
const NO_TEMPLATE = 'stories260K';
const needsNoTemplate = { skip: needsPublishedModels('llm', NO_TEMPLATE) };

let repo: TinyModelRepository;
let worker: WorkerProcess;
let client: LlmClient;

before(async () => {
  repo = await tinyLlmRepository(TINY);
  if (needsNoTemplate.skip === false) {
    await cp(publishedModelPath('llm', NO_TEMPLATE), join(repo.modelDir, 'llm', NO_TEMPLATE), {
      recursive: true,
    });
  }
  worker = await startWorker('llm', {
    env: { MODEL_DIR: repo.modelDir, LLM_DEFAULT_MODEL: TINY, ORT_INTRA_OP_THREADS: '1' },
  });
  client = createClient(Llm, worker.address, { deadlineMs: 30_000, clusterSecret: testClusterSecret });
});
after(async () => {
  client?.close();
  await worker?.stop();
  await repo?.remove();
});

const chat: ChatMessage[] = [
  { role: 'system', content: 'You tell short stories.' },
  { role: 'user', content: 'Once upon a time {{ there }} was' },
];

const metadata = () => callMetadata({ requestId: 'chat-test', keyId: 'a-key-id' });
const complete = (request: CompleteRequest) => unary(client.Complete.bind(client), request, metadata());

async function stream(request: CompleteRequest): Promise<CompleteChunk__Output[]> {
  const chunks: CompleteChunk__Output[] = [];
  try {
    for await (const chunk of client.StreamComplete(request, metadata())) {
      chunks.push(chunk as CompleteChunk__Output);
    }
  } catch (error) {
    throw fromGrpcError(error as ServiceError);
  }
  return chunks;
}

/**
 * The chat as Transformers.js renders it from the model folder's own tokenizer_config.json (with
 * @huggingface/jinja, the generation prompt added) and the token ids it makes of it — the
 * reference the worker must match. (services/llm's chat-template.test.ts also checks the worker's
 * text against @huggingface/jinja rendering the template directly.)
 */
async function reference(messages: ChatMessage[]): Promise<{ text: string; tokens: number }> {
  env.allowRemoteModels = false;
  env.localModelPath = join(repo.modelDir, 'llm');
  const tokenizer = await AutoTokenizer.from_pretrained(TINY);
  const conversation = messages.map(({ role, content }) => ({ role: role!, content: content! }));
  const text = tokenizer.apply_chat_template(conversation, { tokenize: false, add_generation_prompt: true });
  const ids = tokenizer.apply_chat_template<true, false, false>(conversation, {
    add_generation_prompt: true,
    return_tensor: false,
    return_dict: false,
  });
  return { text, tokens: ids.length };
}

async function refusal(request: CompleteRequest): Promise<SwitchboardError[]> {
  const unaryError = await complete(request).then(
    () => assert.fail('Complete answered'),
    (e: unknown) => e,
  );
  const streamError = await stream(request).then(
    (chunks) => assert.fail(`StreamComplete answered ${chunks.length} chunks`),
    (e: unknown) => e,
  );
  for (const error of [unaryError, streamError]) {
    assert.ok(error instanceof SwitchboardError, String(error));
    assert.equal(error.code, 'invalid_request');
    assert.equal(error.httpStatus, 400);
  }
  return [unaryError, streamError] as SwitchboardError[];
}

test('a chat on the tiny Llama answers; its prompt tokens are the ChatML-rendered chat', async () => {
  const { text, tokens } = await reference(chat);
  assert.equal(
    text,
    '<|im_start|>system\nYou tell short stories.<|im_end|>\n' +
      '<|im_start|>user\nOnce upon a time {{ there }} was<|im_end|>\n<|im_start|>assistant\n',
  );
  const response = await complete({ messages: chat, max_tokens: 12, temperature: 0 });
  assert.equal(response.model, TINY);
  assert.equal(response.usage!.prompt_tokens, tokens);
  assert.ok(response.usage!.completion_tokens > 0);
  assert.equal(
    response.usage!.total_tokens,
    response.usage!.prompt_tokens + response.usage!.completion_tokens,
  );
  // The same text as a plain prompt gets the BOS added, one token more: the chat was not.
  const plain = await complete({ prompt: text, max_tokens: 1, temperature: 0 });
  assert.equal(plain.usage!.prompt_tokens, tokens + 1);
  // Another conversation is another prompt.
  const longer = await complete({
    messages: [...chat, { role: 'assistant', content: 'a cat.' }, { role: 'user', content: 'More.' }],
    max_tokens: 1,
  });
  assert.ok(longer.usage!.prompt_tokens > tokens);
});

test('a streamed chat gives deltas then usage, and the same greedy text as the unary call', async () => {
  const request = { messages: chat, max_tokens: 12, temperature: 0 };
  const chunks = await stream(request);
  const done = chunks.at(-1)?.done;
  assert.ok(done, 'the last chunk carries the result');
  assert.ok(chunks.every((c) => c.model === TINY));
  const text = chunks.map((c) => c.delta ?? '').join('');
  assert.ok(chunks.length > 2 && text.length > 0, `deltas came: ${JSON.stringify(chunks)}`);
  assert.equal(done.usage!.completion_tokens, 12);
  const { tokens } = await reference(chat);
  assert.equal(done.usage!.prompt_tokens, tokens);
  assert.equal(text, (await complete(request)).text);
});

test(
  'a chat on a model without a chat template is 400 param model, saying so; its plain prompts still run',
  needsNoTemplate,
  async () => {
    const before = await worker.metric('llm_requests_total');
    for (const error of await refusal({ model: NO_TEMPLATE, messages: chat })) {
      assert.equal(error.param, 'model');
      assert.match(error.message, /stories260K has no chat template/);
    }
    assert.equal(await worker.metric('llm_requests_total'), before, 'no generation ran');
    const plain = await complete({ model: NO_TEMPLATE, prompt: 'Once upon a time', max_tokens: 4 });
    assert.equal(plain.model, NO_TEMPLATE);
  },
);

test('a prompt together with messages is 400 param prompt; an unknown role 400 param messages', async () => {
  for (const error of await refusal({ prompt: 'Once upon a time', messages: chat })) {
    assert.equal(error.param, 'prompt');
  }
  for (const error of await refusal({ messages: [...chat, { role: 'tool', content: 'x' }] })) {
    assert.equal(error.param, 'messages');
  }
});
