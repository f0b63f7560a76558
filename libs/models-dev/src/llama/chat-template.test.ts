// The tiny Llama's tokenizer_config.json carries a real ChatML chat template and otherwise the
// tokenizer's config unchanged; Transformers.js (apply_chat_template) renders chats with it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { buildTinyTokenizer } from '../tokenizer/files.js';
import { buildTinyLlama } from './build.js';
import { CHATML_CHAT_TEMPLATE } from './chat-template.js';

const root = await mkdtemp(join(tmpdir(), 'models-dev-chat-'));
after(() => rm(root, { recursive: true, force: true }));
const built = await buildTinyLlama(join(root, 'tiny-llama'), { seed: 0 });
env.allowRemoteModels = false;
env.localModelPath = root;

test('tokenizer_config.json is the tokenizer config plus the ChatML chat template', () => {
  const written = JSON.parse(
    Buffer.from(built.files.get('tokenizer_config.json') ?? []).toString(),
  ) as Record<string, unknown>;
  const { chat_template: template, ...rest } = written;
  assert.equal(template, CHATML_CHAT_TEMPLATE);
  assert.deepEqual(rest, buildTinyTokenizer({ modelMaxLength: built.shape.maxPositions }).tokenizerConfig);
});

test('Transformers.js renders a chat with it in the ChatML form, with the generation prompt', async () => {
  const tokenizer = await AutoTokenizer.from_pretrained('tiny-llama');
  const chat = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi {{ there }}' },
  ];
  const rendered = tokenizer.apply_chat_template(chat, { tokenize: false, add_generation_prompt: true });
  assert.equal(
    rendered,
    '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi {{ there }}<|im_end|>\n<|im_start|>assistant\n',
  );
  const closed = tokenizer.apply_chat_template(chat, { tokenize: false, add_generation_prompt: false });
  assert.equal(closed, (rendered as string).slice(0, -'<|im_start|>assistant\n'.length));
});
