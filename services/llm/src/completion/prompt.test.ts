// Prompt token ids from a request, through a real tiny Llama loaded by the worker's adapter: a
// plain prompt gets the BOS, a rendered chat gets exactly the tokens its template wrote (the same
// ids Transformers.js's apply_chat_template gives: a template that writes the BOS is not given a
// second one, ChatML gets none); and the requests that are refused, with their param.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AutoTokenizer } from '@huggingface/transformers';
import type { CompleteRequest__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { useLocalModels } from '@switchboard/models';
import { buildTinyLlama } from '@switchboard/models-dev';
import { loadCausalLm } from '../adapters/causal-lm.js';
import type { LanguageModel } from '../generation/model.js';
import { promptTokens } from './prompt.js';
import { toGenerationRequest } from './request.js';

const BOS = 1;
/** Writes the BOS itself, as Llama 2 / Mistral templates do. */
const BOS_WRITING_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}<{{ message['role'] }}>{{ message['content'] }}{% endfor %}<assistant>";

const root = await mkdtemp(join(tmpdir(), 'llm-prompt-'));
after(() => rm(root, { recursive: true, force: true }));

/** A tiny Llama folder whose tokenizer_config.json chat_template is replaced (undefined: removed). */
async function tinyWith(id: string, chatTemplate?: string | null): Promise<void> {
  const dir = join(root, id);
  await buildTinyLlama(dir, { seed: 0 });
  if (chatTemplate === null) return;
  const path = join(dir, 'tokenizer_config.json');
  const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  if (chatTemplate === undefined) delete config['chat_template'];
  else config['chat_template'] = chatTemplate;
  await writeFile(path, JSON.stringify(config));
}

await tinyWith('chatml', null);
await tinyWith('bos-writing', BOS_WRITING_TEMPLATE);
await tinyWith('no-template');
useLocalModels(root);
const execution = { providers: ['cpu'], deviceId: 0, intraOpThreads: 1 } as const;
const load = (id: string) => loadCausalLm({ id, dir: join(root, id), description: '' }, execution);
const [chatml, bosWriting, noTemplate] = await Promise.all([
  load('chatml'),
  load('bos-writing'),
  load('no-template'),
]);
after(() => Promise.all([chatml, bosWriting, noTemplate].map((m) => m.dispose())));

const chat = [
  { role: 'system', content: 'Be kind.' },
  { role: 'user', content: 'Once upon a time' },
];

function request(fields: Partial<CompleteRequest__Output>): CompleteRequest__Output {
  return { prompt: '', model: '', temperature: 0, stop: [], messages: [], ...fields };
}

function refused(model: LanguageModel, fields: Partial<CompleteRequest__Output>): SwitchboardError {
  try {
    promptTokens(request(fields), model);
  } catch (error) {
    assert.ok(error instanceof SwitchboardError, String(error));
    assert.equal(error.code, 'invalid_request');
    return error;
  }
  assert.fail('the request was not refused');
}

/** The ids Transformers.js gives for the same chat on the same folder. */
async function transformersIds(id: string): Promise<number[]> {
  const tokenizer = await AutoTokenizer.from_pretrained(id);
  const ids = tokenizer.apply_chat_template<true, false, false>(chat, {
    add_generation_prompt: true,
    return_tensor: false,
    return_dict: false,
  });
  return ids.map(Number);
}

test('a plain prompt is encoded with its BOS, as before', () => {
  const { ids, param } = promptTokens(request({ prompt: 'Once upon a time' }), chatml);
  assert.equal(param, 'prompt');
  assert.equal(ids[0], BOS);
  assert.equal(ids.filter((id) => id === BOS).length, 1);
});

test('a template that writes the BOS: exactly one BOS, first, and the ids Transformers.js gives', async () => {
  const { ids, param } = promptTokens(request({ messages: chat }), bosWriting);
  assert.equal(param, 'messages');
  assert.equal(ids[0], BOS);
  assert.equal(ids.filter((id) => id === BOS).length, 1, `BOS doubled: ${ids.slice(0, 4).join(',')}`);
  assert.deepEqual(ids, await transformersIds('bos-writing'));
  // And they are the rendered text's own tokens: encoding it with special tokens added doubles the BOS.
  const text = bosWriting.chatTemplate!.render(chat);
  assert.deepEqual(bosWriting.encode(text).slice(0, 2), [BOS, BOS]);
  assert.deepEqual(ids, bosWriting.encode(text, { addSpecialTokens: false }));
});

test('ChatML writes no BOS, so none is added: the ids Transformers.js gives', async () => {
  const { ids } = promptTokens(request({ messages: chat }), chatml);
  assert.ok(!ids.includes(BOS));
  assert.deepEqual(ids, await transformersIds('chatml'));
  assert.equal(chatml.decode(ids), chatml.chatTemplate!.render(chat));
});

test('usage counts the rendered chat: the generation request carries its ids', () => {
  const generation = toGenerationRequest(request({ messages: chat, max_tokens: 3 }), chatml);
  assert.deepEqual(generation.promptIds, promptTokens(request({ messages: chat }), chatml).ids);
});

test('prompt and messages together are refused (param prompt); an empty prompt without messages too', () => {
  assert.equal(refused(chatml, { prompt: 'x', messages: chat }).param, 'prompt');
  assert.equal(refused(chatml, {}).param, 'prompt');
});

test('a model without a chat template refuses messages (param model), saying so', () => {
  assert.equal(noTemplate.chatTemplate, undefined);
  const error = refused(noTemplate, { messages: chat });
  assert.equal(error.param, 'model');
  assert.match(error.message, /no-template has no chat template/);
  // Plain completions on it still work.
  assert.ok(promptTokens(request({ prompt: 'hi' }), noTemplate).ids.length > 1);
});

test('an unknown role is refused (param messages) before anything is rendered', () => {
  for (const role of ['tool', 'System', '', 'function']) {
    const error = refused(chatml, { messages: [...chat, { role, content: 'x' }] });
    assert.equal(error.param, 'messages');
    assert.match(error.message, /messages\[2\]\.role/);
  }
});

test('a chat longer than the context is refused with param messages', () => {
  const long = [{ role: 'user', content: 'word '.repeat(chatml.contextLength) }];
  assert.throws(
    () => toGenerationRequest(request({ messages: long }), chatml),
    (e: unknown) =>
      e instanceof SwitchboardError &&
      e.param === 'messages' &&
      /tokens; the model's context/.test(e.message),
  );
});

test('stop strings beyond the bounds are refused on gRPC too (param stop): too many, empty, too long', () => {
  const stopRefused = (stop: string[]) => {
    try {
      toGenerationRequest(request({ prompt: 'Once', stop }), chatml);
    } catch (error) {
      assert.ok(error instanceof SwitchboardError && error.param === 'stop', String(error));
      return true;
    }
    return false;
  };
  assert.equal(stopRefused(['a', 'b', 'c', 'd', 'e']), true);
  assert.equal(stopRefused(['']), true);
  assert.equal(stopRefused(['x'.repeat(501)]), true);
  assert.equal(stopRefused(['a', 'x'.repeat(500)]), false);
});
