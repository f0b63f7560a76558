// Random weights for published Whisper folders (the published model files beside the checkout: the
// real tokenizers and configs of whisper-base and whisper-tiny.en): the ids and prompt read from
// the real files, the published files left as they are, config.json changed in its dimensions only,
// graphs that take the folder's mel bins and score its whole vocabulary, and Slaney filters equal
// to the published.
import assert from 'node:assert/strict';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { DEV_MODEL_MARKER } from '../marker.js';
import { needsPublishedModels, publishedModelPath } from '../published-models.js';
import { assertCliWrites, withTmp } from '../testing.js';
import {
  buildWhisperFromConfig,
  publishedWhisperLayout,
  readPublishedWhisper,
  whisperFromConfigFiles,
} from './from-config.js';
import { setMelBins, slaneyMelFilters } from './mel.js';
import { argmax, emptyPast, int64, logitsAt } from './testing.js';

/** The published Whisper folders; every test here reads them, and skips, naming them, when absent. */
const shared = publishedModelPath('whisper');
const needsShared = { skip: needsPublishedModels('whisper') };
const PUBLISHED = [
  'generation_config.json',
  'preprocessor_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
];
type Json = Record<string, unknown>;
const parse = (bytes: Uint8Array | undefined): Json =>
  JSON.parse(Buffer.from(bytes ?? []).toString()) as Json;

async function copyOf(folder: string, dir: string): Promise<string> {
  const target = join(dir, folder);
  await cp(join(shared, folder), target, { recursive: true });
  return target;
}

test('the ids, prompt and mel bins of both published folders', needsShared, async () => {
  const base = publishedWhisperLayout(await readPublishedWhisper(join(shared, 'whisper-base')));
  assert.deepEqual(base.ids, { endOfText: 50257, timestampBegin: 50364, end: 51865 });
  assert.equal(base.multilingual, true);
  assert.equal(base.melBins, 80);
  assert.equal(base.textTokens.length, 50257);
  assert.equal(base.textTokens[220], 'Ġ');

  const tiny = publishedWhisperLayout(await readPublishedWhisper(join(shared, 'whisper-tiny.en')));
  // Its tokenizer.json lists no timestamp tokens: they are the ids after <|notimestamps|> up to vocab_size.
  assert.deepEqual(tiny.ids, { endOfText: 50256, timestampBegin: 50363, end: 51864 });
  assert.equal(tiny.multilingual, false);
});

test(
  'config.json keeps every published field but the dimensions; the same seed gives the same bytes',
  needsShared,
  async () => {
    const configs = await readPublishedWhisper(join(shared, 'whisper-base'));
    const a = whisperFromConfigFiles(configs, { seed: 4 });
    assert.deepEqual([...a.files.keys()].sort(), [
      'config.json',
      'onnx/decoder_model_merged.onnx',
      'onnx/encoder_model.onnx',
    ]);
    for (const [path, bytes] of whisperFromConfigFiles(configs, { seed: 4 }).files) {
      assert.ok(Buffer.from(bytes).equals(Buffer.from(a.files.get(path)!)), path);
    }
    const config = parse(a.files.get('config.json'));
    const dims = [
      'd_model',
      'encoder_layers',
      'decoder_layers',
      'num_hidden_layers',
      'encoder_attention_heads',
      'decoder_attention_heads',
      'encoder_ffn_dim',
      'decoder_ffn_dim',
    ];
    for (const [key, value] of Object.entries(configs.config)) {
      if (!dims.includes(key)) assert.deepEqual(config[key], value, key);
    }
    assert.deepEqual(
      dims.map((k) => config[k]),
      [32, 2, 2, 2, 4, 4, 128, 128],
    );
    assert.equal(config['vocab_size'], 51865);
    assert.equal((config[DEV_MODEL_MARKER] as { seed: number }).seed, 4);
  },
);

test(
  'the graphs take the folder’s mel bins and score its whole vocabulary; prompt-only tokens lose to text',
  needsShared,
  async () => {
    for (const [folder, prompt] of [
      ['whisper-base', [50258, 50259, 50359]],
      ['whisper-tiny.en', [50257]],
    ] as const) {
      const model = whisperFromConfigFiles(await readPublishedWhisper(join(shared, folder)), { seed: 5 });
      const { shape: s, layout } = model;
      const encoder = await InferenceSession.create(model.files.get('onnx/encoder_model.onnx')!);
      const decoder = await InferenceSession.create(model.files.get('onnx/decoder_model_merged.onnx')!);
      const features = Float32Array.from({ length: 80 * 3000 }, (_, i) => Math.sin(i * 0.37) * 0.8);
      const { last_hidden_state: states } = await encoder.run({
        input_features: new Tensor('float32', features, [1, 80, 3000]),
      });
      assert.deepEqual(states?.dims, [1, 1500, s.dModel]);
      const out = await decoder.run({
        input_ids: int64([[...prompt]]),
        encoder_hidden_states: states,
        ...emptyPast(s, 1),
      });
      assert.deepEqual(out['logits']?.dims, [1, prompt.length, layout.ids.end], folder);
      const next = logitsAt(out['logits']);
      assert.ok(next.every(Number.isFinite));
      // Outside the timestamps, the best next token is text, never a prompt-only special token.
      assert.ok(argmax(next, 0, layout.ids.timestampBegin) < layout.ids.endOfText, folder);
    }
  },
);

test(
  'built on a copy: the tokenizer and configs stay byte for byte as published; the CLI writes the same',
  needsShared,
  async () => {
    await withTmp(async (tmp) => {
      const dir = await copyOf('whisper-tiny.en', tmp);
      const model = await buildWhisperFromConfig(dir, { seed: 6 });
      for (const file of PUBLISHED) {
        assert.ok(
          (await readFile(join(dir, file))).equals(await readFile(join(shared, 'whisper-tiny.en', file))),
          file,
        );
      }
      for (const [path, bytes] of model.files)
        assert.ok((await readFile(join(dir, path))).equals(bytes), path);
      const viaCli = await copyOf('whisper-tiny.en', join(tmp, 'cli'));
      await assertCliWrites(
        'build-whisper-from-config',
        'whisper on the published configs',
        6,
        viaCli,
        model.files,
      );
    });
  },
);

test(
  'Slaney filters equal the published 80-bin mel_filters; setMelBins gives a config 128 bins',
  needsShared,
  async () => {
    const preprocessor = JSON.parse(
      await readFile(join(shared, 'whisper-base', 'preprocessor_config.json'), 'utf8'),
    ) as { mel_filters: number[][] };
    const ours = slaneyMelFilters({ bins: 80 });
    assert.equal(ours.length, preprocessor.mel_filters.length);
    let worst = 0;
    ours.forEach((row, m) =>
      row.forEach((v, k) => (worst = Math.max(worst, Math.abs(v - preprocessor.mel_filters[m]![k]!)))),
    );
    assert.ok(worst < 1e-6, `largest difference ${worst}`);

    await withTmp(async (tmp) => {
      const dir = await copyOf('whisper-base', tmp);
      await setMelBins(dir, 128);
      const configs = await readPublishedWhisper(dir);
      assert.equal(configs.preprocessor['feature_size'], 128);
      const filters = configs.preprocessor['mel_filters'] as number[][];
      assert.deepEqual([filters.length, filters[0]!.length], [128, 201]);
      assert.ok(
        filters.every((row) => row.some((v) => v > 0)),
        'no empty filter',
      );
      assert.equal(configs.config['num_mel_bins'], 128);
      const model = await buildWhisperFromConfig(dir, { seed: 7 });
      const encoder = await InferenceSession.create(model.files.get('onnx/encoder_model.onnx')!);
      const { last_hidden_state: states } = await encoder.run({
        input_features: new Tensor('float32', new Float32Array(128 * 3000).fill(-0.5), [1, 128, 3000]),
      });
      assert.deepEqual(states?.dims, [1, 1500, 32]);
    });
  },
);

test('a folder whose files disagree is refused', needsShared, async () => {
  const configs = await readPublishedWhisper(join(shared, 'whisper-base'));
  assert.throws(
    () =>
      publishedWhisperLayout({ ...configs, preprocessor: { ...configs.preprocessor, feature_size: 128 } }),
    /num_mel_bins \(80\) differs from preprocessor_config.json's feature_size \(128\)/,
  );
  assert.throws(
    () => publishedWhisperLayout({ ...configs, config: { ...configs.config, vocab_size: 51864 } }),
    /timestamp ids/,
  );
  assert.throws(() =>
    publishedWhisperLayout({ ...configs, config: { ...configs.config, model_type: 'bert' } }),
  );
});
