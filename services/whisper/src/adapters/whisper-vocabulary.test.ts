// The languages and prompts read from published Whisper exports (the published model files beside
// the checkout: the real generation configs and tokenizers of whisper-base and whisper-tiny.en).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { needsPublishedModels, publishedModelPath } from '@switchboard/models-dev/published-models';
import {
  melBins,
  mostLikelyLanguage,
  whisperVocabulary,
  type WhisperGenerationFields,
} from './whisper-vocabulary.js';

/** The published Whisper folders; the tests that read them skip, naming them, when absent. */
const needs = (folder: string) => ({ skip: needsPublishedModels('whisper', folder) });

async function published(folder: string) {
  const read = async (file: string) =>
    JSON.parse(await readFile(publishedModelPath('whisper', folder, file), 'utf8')) as unknown;
  const generation = (await read('generation_config.json')) as WhisperGenerationFields;
  const tokenizer = (await read('tokenizer.json')) as { added_tokens: { content: string; id: number }[] };
  const ids = new Map(tokenizer.added_tokens.map((t) => [t.content, t.id]));
  return {
    generation,
    tokenId: (token: string) => ids.get(token),
    added: [...ids.keys()],
  };
}

test(
  'whisper-base: multilingual, the 99 languages of its lang_to_id, prompts from its own ids',
  needs('whisper-base'),
  async () => {
    const { generation, tokenId, added } = await published('whisper-base');
    const vocabulary = whisperVocabulary(generation, tokenId, added);
    assert.equal(vocabulary.multilingual, true);
    assert.equal(vocabulary.languages.size, 99);
    assert.equal(vocabulary.languages.get('en'), 50259);
    assert.equal(vocabulary.languages.get('haw'), tokenId('<|haw|>'));
    assert.deepEqual(vocabulary.prompt('fr'), [50258, tokenId('<|fr|>'), tokenId('<|transcribe|>')]);
    assert.throws(() => vocabulary.prompt('xx'), /not a language of this model/);
  },
);

test(
  'without lang_to_id, a multilingual model’s languages are its tokenizer’s language tokens',
  needs('whisper-base'),
  async () => {
    const { generation, tokenId, added } = await published('whisper-base');
    const fromTokenizer = whisperVocabulary({ ...generation, lang_to_id: null }, tokenId, added);
    assert.deepEqual(
      [...fromTokenizer.languages].sort(),
      [...whisperVocabulary(generation, tokenId, added).languages].sort(),
    );
    // is_multilingual absent: a lang_to_id says multilingual.
    assert.equal(
      whisperVocabulary({ ...generation, is_multilingual: null }, tokenId, added).multilingual,
      true,
    );
    assert.throws(
      () => whisperVocabulary({ ...generation, lang_to_id: null }, () => undefined, []),
      /without language tokens/,
    );
  },
);

test(
  'whisper-tiny.en: English only (its tokenizer’s language tokens do not count), prompt <|startoftranscript|>',
  needs('whisper-tiny.en'),
  async () => {
    const { generation, tokenId, added } = await published('whisper-tiny.en');
    assert.ok(tokenId('<|fr|>') !== undefined, 'the tokenizer has language tokens it was never trained on');
    const vocabulary = whisperVocabulary(generation, tokenId, added);
    assert.equal(vocabulary.multilingual, false);
    assert.deepEqual([...vocabulary.languages.keys()], ['en']);
    assert.deepEqual(vocabulary.prompt('en'), [50257]);
    assert.equal(mostLikelyLanguage([], vocabulary.languages), 'en');
  },
);

test('detection picks the best of the model’s language tokens, whatever else scores higher', () => {
  const languages = new Map([
    ['de', 5],
    ['fr', 6],
    ['ja', 7],
  ]);
  const logits = Float32Array.from([9, 9, 9, 9, 9, -1, 3, 2, 9]); // 'en' would be id 0..4
  assert.equal(mostLikelyLanguage(logits, languages), 'fr');
  assert.equal(mostLikelyLanguage(Float32Array.from([0, 0, 0, 0, 0, 1, 0, 2]), languages), 'ja');
});

test('mel bins come from preprocessor_config.json and must match the encoder’s', () => {
  assert.equal(melBins(80, 80), 80);
  assert.equal(melBins(128, 128), 128);
  assert.equal(melBins(128, undefined), 128);
  assert.throws(() => melBins(128, 80), /differs/);
  assert.throws(() => melBins(undefined, 80), /feature_size/);
});
