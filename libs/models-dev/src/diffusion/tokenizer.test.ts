// The tokenizer/ folder through Transformers.js, as the diffusion worker loads it: a CLIPTokenizer
// that lowercases, marks word ends, frames prompts with <|startoftext|> … <|endoftext|> and pads
// with <|endoftext|> to 77; and the slow-tokenizer files (vocab.json, merges.txt) agree with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { writeModelFolder } from '../write.js';
import { tinyDiffusionFiles } from './build.js';
import { withTmp } from '../testing.js';

const { files, ids, shape } = tinyDiffusionFiles();
const text = (path: string): string => Buffer.from(files.get(path) ?? []).toString();

async function withTokenizer(
  fn: (tokenizer: Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>) => Promise<void>,
) {
  await withTmp(async (root) => {
    await writeModelFolder(join(root, 'tiny-sd'), files);
    env.allowRemoteModels = false;
    env.localModelPath = root;
    await fn(await AutoTokenizer.from_pretrained('tiny-sd/tokenizer', { local_files_only: true }));
  });
}

test('padded to 77: <|startoftext|>, the prompt, then <|endoftext|> as EOS and padding', async () => {
  await withTokenizer(async (tokenizer) => {
    assert.equal(tokenizer.constructor.name, 'CLIPTokenizer');
    assert.equal(tokenizer.model_max_length, 77);
    assert.deepEqual(
      [tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id],
      [ids.bos, ids.eos, ids.pad],
    );
    const { input_ids } = tokenizer(['a cat', ''], {
      padding: 'max_length',
      truncation: true,
      max_length: 77,
    });
    assert.deepEqual(input_ids.dims, [2, 77]);
    const rows = (input_ids.tolist() as bigint[][]).map((r) => r.map(Number));
    const [cat = [], empty = []] = rows;
    const textIds = cat.slice(1, cat.indexOf(ids.eos));
    assert.ok(textIds.length >= 2 && textIds.every((id) => id < ids.bos), 'the text is plain vocabulary');
    assert.deepEqual(cat, [ids.bos, ...textIds, ...Array<number>(76 - textIds.length).fill(ids.eos)]);
    assert.deepEqual(empty, [ids.bos, ...Array<number>(76).fill(ids.eos)]);
    assert.ok(rows.flat().every((id) => id < shape.vocabSize));
    const long = tokenizer(['a photo of a cat '.repeat(40)], {
      padding: 'max_length',
      truncation: true,
      max_length: 77,
    });
    assert.deepEqual(long.input_ids.dims, [1, 77]);
  });
});

test('CLIP text handling: lowercase, whitespace runs collapse, words end in </w>, merges apply', async () => {
  await withTokenizer(async (tokenizer) => {
    const prompt = 'a photo of a cat sitting on a red chair';
    assert.deepEqual(
      tokenizer.encode('A  Photo\tof a CAT sitting\non a RED chair'),
      tokenizer.encode(prompt),
    );
    const tokens = tokenizer.tokenize(prompt);
    assert.ok(tokens.length < prompt.replaceAll(' ', '').length / 2, `merges in use: ${tokens.join(' ')}`);
    assert.equal(
      tokens.filter((t) => t.endsWith('</w>')).length,
      prompt.split(' ').length,
      'one word end per word',
    );
    assert.deepEqual(tokenizer.tokenize('cats!'), [...tokenizer.tokenize('cats'), '!</w>']);
    for (const input of [prompt, 'héllo wörld ✓ 日本 🙂']) {
      assert.equal(tokenizer.decode(tokenizer.encode(input), { skip_special_tokens: true }), input);
    }
  });
});

test('vocab.json, merges.txt and the special-token files agree with tokenizer.json', () => {
  const json = JSON.parse(text('tokenizer/tokenizer.json')) as {
    model: { vocab: Record<string, number>; merges: [string, string][]; end_of_word_suffix: string };
    post_processor: { type: string };
  };
  assert.equal(json.model.end_of_word_suffix, '</w>');
  assert.equal(json.post_processor.type, 'RobertaProcessing');
  assert.deepEqual(JSON.parse(text('tokenizer/vocab.json')), json.model.vocab);
  const [header, ...lines] = text('tokenizer/merges.txt').trimEnd().split('\n');
  assert.equal(header, '#version: 0.2');
  assert.deepEqual(
    lines.map((l) => l.split(' ')),
    json.model.merges,
  );
  assert.equal(json.model.vocab['<|startoftext|>'], ids.bos);
  assert.equal(json.model.vocab['<|endoftext|>'], ids.eos);
  const config = JSON.parse(text('tokenizer/tokenizer_config.json')) as Record<string, unknown>;
  assert.deepEqual(
    [
      config['tokenizer_class'],
      config['bos_token'],
      config['eos_token'],
      config['pad_token'],
      config['model_max_length'],
    ],
    ['CLIPTokenizer', '<|startoftext|>', '<|endoftext|>', '<|endoftext|>', 77],
  );
  const map = JSON.parse(text('tokenizer/special_tokens_map.json')) as Record<string, unknown>;
  assert.equal(map['pad_token'], '<|endoftext|>');
});
