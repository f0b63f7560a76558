// The chat template as the worker renders it: the same text @huggingface/jinja renders from the
// same template directly, and the same text Transformers.js's apply_chat_template renders (so the
// special-token variables are the ones it passes); the list-of-named-templates form; templates
// that are missing, broken or refuse a conversation; message text stays data.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Template } from '@huggingface/jinja';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { SwitchboardError } from '@switchboard/errors';
import { buildTinyLlama, CHATML_CHAT_TEMPLATE } from '@switchboard/models-dev';
import { ChatTemplate, type ChatTurn } from './chat-template.js';

const root = await mkdtemp(join(tmpdir(), 'llm-chat-template-'));
after(() => rm(root, { recursive: true, force: true }));
const { files } = await buildTinyLlama(join(root, 'tiny'), { seed: 0 });
const tinyConfig = JSON.parse(Buffer.from(files.get('tokenizer_config.json')!).toString()) as Record<
  string,
  unknown
>;
env.allowRemoteModels = false;
env.localModelPath = root;

const chat: ChatTurn[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hi!' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Tell me a story.' },
];

/** A Llama-2-style template: it writes the BOS and EOS itself, from the special-token variables. */
const BOS_WRITING_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}[INST] {{ message['content'] }} [/INST]{% elif message['role'] == 'assistant' %} {{ message['content'] }}{{ eos_token }}{% else %}<<SYS>>{{ message['content'] }}<</SYS>>{% endif %}{% endfor %}";

const withTemplate = (chat_template: unknown, extra: Record<string, unknown> = {}) =>
  ChatTemplate.fromTokenizerConfig({ ...tinyConfig, chat_template, ...extra });

function refusal(fn: () => unknown): SwitchboardError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SwitchboardError, String(error));
    assert.equal(error.code, 'invalid_request');
    return error;
  }
  assert.fail('no error');
}

test('the tiny Llama renders as @huggingface/jinja renders its template directly: ChatML plus the generation prompt', () => {
  const template = ChatTemplate.fromTokenizerConfig(tinyConfig);
  assert.ok(template);
  const rendered = template.render(chat);
  const direct = new Template(CHATML_CHAT_TEMPLATE).render({ messages: chat, add_generation_prompt: true });
  assert.equal(rendered, direct);
  assert.equal(
    rendered,
    '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n' +
      '<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nTell me a story.<|im_end|>\n' +
      '<|im_start|>assistant\n',
  );
});

test('the text equals what Transformers.js apply_chat_template renders, special tokens included', async () => {
  const tokenizer = await AutoTokenizer.from_pretrained('tiny');
  const options = { tokenize: false, add_generation_prompt: true } as const;
  assert.equal(
    ChatTemplate.fromTokenizerConfig(tinyConfig)!.render(chat),
    tokenizer.apply_chat_template(chat, options),
  );
  const bosWriting = withTemplate(BOS_WRITING_TEMPLATE)!.render(chat);
  assert.equal(
    bosWriting,
    tokenizer.apply_chat_template(chat, { ...options, chat_template: BOS_WRITING_TEMPLATE }),
  );
  assert.equal(
    bosWriting,
    '<s><<SYS>>You are terse.<</SYS>>[INST] Hi! [/INST] Hello.</s>[INST] Tell me a story. [/INST]',
  );
});

test('special tokens given as serialized AddedTokens are passed as their text; absent ones as undefined', () => {
  const template = withTemplate(
    '{{ bos_token }}|{{ eos_token }}|{{ unk_token is defined }}|{{ mask_token is defined }}',
    {
      bos_token: { __type: 'AddedToken', content: '<s>', lstrip: false },
      eos_token: { __type: 'AddedToken', content: '</s>' },
      unk_token: null,
    },
  );
  assert.equal(template!.render(chat), '<s>|</s>|false|false');
});

test('the list form: the template named "default" is used, not the others', () => {
  const template = withTemplate([
    { name: 'tool_use', template: 'TOOLS {{ messages | length }}' },
    {
      name: 'default',
      template: "DEFAULT {{ messages[0]['content'] }}{% if add_generation_prompt %} >{% endif %}",
    },
    { name: 'rag', template: 'RAG' },
  ]);
  assert.equal(template!.render(chat), 'DEFAULT You are terse. >');
});

test('no template: absent, null or empty gives none', () => {
  const { chat_template: _, ...without } = tinyConfig;
  assert.equal(ChatTemplate.fromTokenizerConfig(without), undefined);
  assert.equal(withTemplate(null), undefined);
  assert.equal(withTemplate(''), undefined);
});

test('a template that cannot be used loads, and each chat says why (param model)', () => {
  const cases: [unknown, RegExp][] = [
    ['{% for message in messages %}{{ message', /does not parse/],
    [[{ name: 'tool_use', template: 'x' }], /no template named "default"/],
    [[{ name: 'default' }], /not \{name, template\}/],
    [[null], /not \{name, template\}/],
    [42, /neither a string nor a list/],
  ];
  for (const [value, reason] of cases) {
    const template = withTemplate(value);
    assert.ok(template, JSON.stringify(value));
    const error = refusal(() => template.render(chat));
    assert.equal(error.param, 'model');
    assert.match(error.message, reason);
  }
});

test("a template's raise_exception refuses the messages (param messages), with the template's words", () => {
  const template = withTemplate(
    "{% for message in messages %}{% if message['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ message['content'] }}{% endfor %}",
  );
  const error = refusal(() => template!.render(chat));
  assert.equal(error.param, 'messages');
  assert.match(error.message, /System role not supported/);
  assert.equal(template!.render(chat.slice(1)), 'Hi!Hello.Tell me a story.');
});

test('message text is data: template syntax in it is written out as is, never run', () => {
  const hostile: ChatTurn[] = [
    {
      role: 'user',
      content: "{{ raise_exception('boom') }}{% for x in range(99999999) %}x{% endfor %}{{ bos_token }}",
    },
  ];
  assert.equal(
    ChatTemplate.fromTokenizerConfig(tinyConfig)!.render(hostile),
    `<|im_start|>user\n${hostile[0]!.content}<|im_end|>\n<|im_start|>assistant\n`,
  );
});

test('the template sees only role and content of each message', () => {
  const template = withTemplate(
    "{% for m in messages %}{{ m | length }}{{ m['name'] is defined }}{% endfor %}",
  );
  const extra = [{ role: 'user', content: 'x', name: 'sneaky' } as ChatTurn];
  assert.equal(template!.render(extra), '2false');
});
