// Reproducibility and the folder layout of the tiny Whisper: the same seed gives the same bytes in
// every file (in memory, on disk and through the CLI); another seed changes only the weights; the
// JSON files carry what Transformers.js's Whisper reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEV_MODEL_MARKER } from '../marker.js';
import { buildTinyWhisper, tinyWhisperFiles } from './build.js';
import { WHISPER_LANGUAGES } from './tokens.js';
import { assertCliUsage, assertCliWrites, assertWritten, listFiles, withTmp } from '../testing.js';

const LAYOUT = [
  'config.json',
  'generation_config.json',
  'onnx/decoder_model_merged.onnx',
  'onnx/encoder_model.onnx',
  'preprocessor_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
];
const WEIGHTS = ['onnx/encoder_model.onnx', 'onnx/decoder_model_merged.onnx'];

const parse = (bytes: Uint8Array | undefined): Record<string, unknown> =>
  JSON.parse(Buffer.from(bytes ?? []).toString()) as Record<string, unknown>;

test('the same seed gives identical bytes; a different seed changes the weights only; files are small', () => {
  const a = tinyWhisperFiles({ seed: 42 });
  const b = tinyWhisperFiles({ seed: 42 });
  const c = tinyWhisperFiles({ seed: 43 });
  assert.deepEqual([...a.files.keys()].sort(), LAYOUT);
  const same = (x: typeof a, path: string): boolean =>
    Buffer.from(x.files.get(path) ?? []).equals(Buffer.from(a.files.get(path) ?? []));
  let total = 0;
  for (const [path, bytes] of a.files) {
    assert.ok(same(b, path), `${path} differs for the same seed`);
    assert.equal(same(c, path), !WEIGHTS.includes(path) && path !== 'config.json', path);
    total += bytes.byteLength;
  }
  assert.ok(total < 3 * 1024 * 1024, `${total} bytes`);
  assert.equal((parse(c.files.get('config.json'))[DEV_MODEL_MARKER] as { seed: number }).seed, 43);
});

test('config.json describes a Whisper to Transformers.js and says it is a development model', () => {
  const { files, shape, ids } = tinyWhisperFiles();
  const config = parse(files.get('config.json'));
  assert.equal(config['model_type'], 'whisper');
  assert.deepEqual(config['architectures'], ['WhisperForConditionalGeneration']);
  assert.equal(config['is_encoder_decoder'], true);
  assert.deepEqual(
    [config['d_model'], config['encoder_layers'], config['decoder_layers']],
    [shape.dModel, shape.encoderLayers, shape.decoderLayers],
  );
  assert.deepEqual([config['encoder_attention_heads'], config['decoder_attention_heads']], [4, 4]);
  assert.deepEqual([config['encoder_ffn_dim'], config['decoder_ffn_dim']], [128, 128]);
  assert.deepEqual(
    [config['num_mel_bins'], config['max_source_positions'], config['max_target_positions']],
    [80, 1500, 448],
  );
  assert.equal(config['vocab_size'], ids.end);
  assert.equal(config['decoder_start_token_id'], ids.startOfTranscript);
  assert.deepEqual([config['eos_token_id'], config['pad_token_id']], [ids.endOfText, ids.endOfText]);
  assert.match(JSON.stringify(config[DEV_MODEL_MARKER]), /random-weight/);
});

test("generation_config.json has what Whisper's generate reads; preprocessor_config.json the log-mel front end", () => {
  const { files, ids } = tinyWhisperFiles();
  const generation = parse(files.get('generation_config.json'));
  assert.equal(generation['decoder_start_token_id'], ids.startOfTranscript);
  assert.equal(generation['eos_token_id'], ids.endOfText);
  assert.equal(generation['is_multilingual'], true);
  assert.equal(generation['no_timestamps_token_id'], ids.noTimestamps);
  assert.equal(generation['max_initial_timestamp_index'], 50);
  assert.equal(generation['max_length'], 448);
  assert.deepEqual(generation['task_to_id'], { transcribe: ids.transcribe, translate: ids.translate });
  const langToId = generation['lang_to_id'] as Record<string, number>;
  assert.deepEqual(
    Object.keys(langToId),
    WHISPER_LANGUAGES.map((l) => `<|${l}|>`),
  );
  assert.deepEqual(
    Object.values(langToId),
    WHISPER_LANGUAGES.map((_, i) => ids.startOfTranscript + 1 + i),
  );
  assert.ok((generation['begin_suppress_tokens'] as number[]).includes(ids.endOfText));
  assert.ok((generation['suppress_tokens'] as number[]).includes(ids.startOfTranscript));

  const pre = parse(files.get('preprocessor_config.json'));
  assert.equal(pre['feature_extractor_type'], 'WhisperFeatureExtractor');
  assert.equal(pre['processor_class'], 'WhisperProcessor');
  assert.deepEqual(
    [pre['feature_size'], pre['sampling_rate'], pre['hop_length'], pre['chunk_length'], pre['n_fft']],
    [80, 16000, 160, 30, 400],
  );
  assert.deepEqual(
    [pre['n_samples'], pre['nb_max_frames'], pre['return_attention_mask']],
    [480000, 3000, false],
  );
  assert.equal(parse(files.get('tokenizer_config.json'))['tokenizer_class'], 'WhisperTokenizer');
});

test('buildTinyWhisper writes the layout, and the CLI writes the same bytes for the same seed', async () => {
  await withTmp(async (tmp) => {
    const dir = join(tmp, 'whisper', 'tiny-whisper');
    const { files } = await buildTinyWhisper(dir, { seed: 5 });
    assert.deepEqual(await listFiles(dir), LAYOUT);
    await assertWritten(dir, files);
    await assert.rejects(buildTinyWhisper(dir, { seed: 5 }), /already holds files/);
    await assertCliWrites('build-whisper', 'whisper', 5, join(tmp, 'cli-whisper'), files);
    await assertCliUsage('build-whisper');
  });
});
