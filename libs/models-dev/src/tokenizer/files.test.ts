// The tokenizer files load in Transformers.js (no network) and behave like a Llama-style
// byte-level BPE: BOS first, merges in use, lossless round trips for any UTF-8 text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { byteToChar } from './byte-level.js';
import { buildTinyTokenizer } from './files.js';

const built = buildTinyTokenizer({ modelMaxLength: 2048 });

async function loadTokenizer(): Promise<Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>> {
  const root = await mkdtemp(join(tmpdir(), 'models-dev-tok-'));
  try {
    await mkdir(join(root, 'tiny'));
    await writeFile(join(root, 'tiny', 'tokenizer.json'), JSON.stringify(built.tokenizerJson));
    await writeFile(join(root, 'tiny', 'tokenizer_config.json'), JSON.stringify(built.tokenizerConfig));
    env.allowRemoteModels = false;
    env.localModelPath = root;
    return await AutoTokenizer.from_pretrained('tiny');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

test('the byte alphabet has 256 distinct printable characters; space is Ġ', () => {
  const table = byteToChar();
  assert.equal(new Set(table).size, 256);
  assert.equal(table[0x20], 'Ġ');
  assert.equal(table[0x41], 'A');
  assert.ok(table.every((c) => !/\s/u.test(c)));
});

test('encode → decode round-trips ASCII and multi-byte UTF-8, with BOS prepended', async () => {
  const tokenizer = await loadTokenizer();
  assert.equal(
    built.vocabSize,
    3 + 256 + (built.tokenizerJson as { model: { merges: unknown[] } }).model.merges.length,
  );
  for (const text of [
    'The model answers the question.',
    'héllo wörld ✓ 日本',
    'emoji 🙂 and tabs\tand\nnewlines  ',
    '',
  ]) {
    const ids = tokenizer.encode(text);
    assert.equal(ids[0], built.bosTokenId, `BOS first for ${JSON.stringify(text)}`);
    assert.ok(ids.slice(1).every((id) => id > built.eosTokenId && id < built.vocabSize));
    assert.equal(tokenizer.decode(ids, { skip_special_tokens: true }), text);
    assert.equal(tokenizer.decode(ids), `<s>${text}`);
  }
});

test('merges shorten common English text; special tokens have the configured ids', async () => {
  const tokenizer = await loadTokenizer();
  const text = 'The model answers the request';
  assert.ok(tokenizer.encode(text).length < new TextEncoder().encode(text).length / 2, 'merges are applied');
  assert.deepEqual(
    [tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id],
    [built.bosTokenId, built.eosTokenId, built.padTokenId],
  );
  assert.deepEqual(tokenizer.encode('</s><pad>', { add_special_tokens: false }), [
    built.eosTokenId,
    built.padTokenId,
  ]);
});

test('an exact vocabulary size keeps the learned merges first, then adds merges of new tokens', () => {
  type Json = { model: { vocab: Record<string, number>; merges: [string, string][] } };
  const learned = (built.tokenizerJson as Json).model;
  const started = performance.now();
  const sized = buildTinyTokenizer({ modelMaxLength: 2048, vocabSize: 151_936 });
  assert.ok(performance.now() - started < 10_000, 'linear in the merges made');
  const { vocab, merges } = (sized.tokenizerJson as Json).model;
  assert.equal(sized.vocabSize, 151_936);
  assert.equal(Object.keys(vocab).length, 151_936);
  assert.deepEqual(merges.slice(0, learned.merges.length), learned.merges);
  const added = merges.slice(learned.merges.length).map(([a, b]) => {
    assert.ok(a in vocab && b in vocab, `${a} ${b} merges known tokens`);
    return a + b;
  });
  assert.ok(added.every((token) => !(token in learned.vocab)));
  assert.equal(new Set(added).size, added.length, 'each added merge makes a token of its own');
  // Ids 0–2 are the special tokens, the text ids follow without a gap.
  assert.deepEqual(
    Object.values(vocab).sort((a, b) => a - b),
    Array.from({ length: 151_936 }, (_, i) => i),
  );
});
