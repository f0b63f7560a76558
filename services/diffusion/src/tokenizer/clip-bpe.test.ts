// The CLIP tokenizer built from the published SD 1.5 export's vocab.json + merges.txt (no
// tokenizer.json; the published model files beside the checkout, read in place) gives CLIP's ids.
// Expected ids: "a photo of a cat" is the known CLIP ViT-L/14 encoding; the others are whole words
// of the vocabulary, each id looked up in vocab.json ("photograph</w>" 8853, "astronaut</w>" 18376,
// "riding</w>" 6765, "horse</w>" 4558, "an</w>" 550, ",</w>" 267, "dog</w>" 1929, "!</w>" 256,
// "1</w>" 272 …), which BPE must rebuild from single bytes through merges.txt; "switchboard" is not
// a word of the vocabulary and splits into "switch" (22480) + "board</w>" (1972).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { needsPublishedModels, publishedModelPath } from '@switchboard/models-dev/published-models';
import { ClipBpeTokenizer, cleanText } from './clip-bpe.js';

const TOKENIZER = ['diffusion', 'sd15-onnx-layout', 'tokenizer'];
/** The tests that read the export's tokenizer skip, naming the folder, without it. */
const needsTokenizer = { skip: needsPublishedModels(...TOKENIZER) };

let clip: ClipBpeTokenizer;
before(async () => {
  if (needsTokenizer.skip === false)
    clip = await ClipBpeTokenizer.fromFolder(publishedModelPath(...TOKENIZER));
});

const BOS = 49406;
const EOS = 49407;

test('known CLIP ids for a set of prompts', needsTokenizer, () => {
  const cases: [string, number[]][] = [
    ['a photo of a cat', [320, 1125, 539, 320, 2368]],
    ['a photograph of an astronaut riding a horse', [320, 8853, 539, 550, 18376, 6765, 320, 4558]],
    ['A Cat, a DOG!', [320, 2368, 267, 320, 1929, 256]],
    ['  a\tlighthouse\n at   dusk ', [320, 13717, 536, 19708]],
    ['123', [272, 273, 274]],
    ["it's the switchboard", [585, 568, 518, 22480, 1972]],
  ];
  for (const [prompt, ids] of cases) {
    assert.deepEqual(clip.encode([prompt])[0]!.slice(0, ids.length + 2), [BOS, ...ids, EOS], prompt);
  }
});

test(
  'rows are 77 ids: padded with the configured pad token, long prompts cut before EOS',
  needsTokenizer,
  () => {
    const [short, long] = clip.encode(['a photo of a cat', Array(100).fill('cat').join(' ')]);
    assert.equal(short!.length, 77);
    assert.deepEqual(short!.slice(7), Array(70).fill(EOS), 'pad_token is <|endoftext|> in this export');
    assert.equal(long!.length, 77);
    assert.deepEqual(long, [BOS, ...Array<number>(75).fill(2368), EOS]);
    assert.deepEqual(clip.encode(['']), [[BOS, EOS, ...Array<number>(75).fill(EOS)]]);
  },
);

test('cleaning: NFC, control characters dropped, CJK ideographs apart, whitespace collapsed, lower case', () => {
  assert.equal(cleanText('  Cafe\u0301\u0007  AU\tLAIT \n'), 'café au lait');
  // Ideographs stand apart; kana (not ideographs) stay with their neighbours, as BERT's cleaner does.
  assert.equal(cleanText('猫の写真'), '猫 の 写 真');
  assert.equal(cleanText('ねこ猫'), 'ねこ 猫');
});
