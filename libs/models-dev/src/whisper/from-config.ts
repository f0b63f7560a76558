// A random-weight Whisper for a published Whisper folder (config.json, generation_config.json,
// preprocessor_config.json, tokenizer.json as Hugging Face / Transformers.js publish them, without
// weights): the ONNX graphs of the Transformers.js layout (onnx/encoder_model.onnx,
// onnx/decoder_model_merged.onnx) sized for that folder's vocabulary (every text, special and
// timestamp id), mel bins and prompt, with small dimensions. config.json keeps every field but
// the dimensions (d_model, layers, heads, FFN) and says it is a development model; the tokenizer,
// generation and preprocessor files are left exactly as published, so a worker runs on them.
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEV_MODEL_MARKER } from '../marker.js';
import { serializeModel } from '../onnx/serialize.js';
import { Random } from '../random.js';
import { AUDIO, type WhisperShape } from './config.js';
import { buildDecoderGraph } from './decoder.js';
import { buildEncoderGraph } from './encoder.js';
import { finalLogitsBias, PROMPT_END, tokenEmbeddings, type StructureIds } from './logits-prior.js';
import { TIMESTAMP_COUNT } from './tokens.js';

type Json = Record<string, unknown>;

/** The JSON files of a published Whisper folder, as read. */
export interface PublishedWhisperConfigs {
  readonly config: Json;
  readonly generation: Json;
  readonly preprocessor: Json;
  readonly tokenizer: Json;
}

/** What the graphs need to know about a published folder's vocabulary and front end. */
export interface PublishedWhisperLayout {
  readonly ids: StructureIds;
  /** Byte-level text tokens by id (ids below `<|endoftext|>`); gaps are '\u0000'. */
  readonly textTokens: readonly string[];
  /** True when the prompt carries language and task tokens (generation_config's is_multilingual). */
  readonly multilingual: boolean;
  /** `feature_size` of preprocessor_config.json (80, or 128 for large-v3). */
  readonly melBins: number;
  readonly maxSourcePositions: number;
  readonly maxTargetPositions: number;
}

export interface WhisperFromConfigOptions {
  readonly seed?: number;
  readonly dModel?: number;
  readonly encoderLayers?: number;
  readonly decoderLayers?: number;
  readonly heads?: number;
  readonly ffnDim?: number;
}

export interface WhisperFromConfig {
  readonly shape: WhisperShape;
  readonly seed: number;
  readonly layout: PublishedWhisperLayout;
  /** The files written (config.json and the two graphs), by path in the folder. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const number = (json: Json, key: string, file: string): number => {
  const value = json[key];
  const first = Array.isArray(value) ? (value as unknown[])[0] : value;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 0) {
    throw new Error(`${file}: ${key} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return first;
};

async function readJson(path: string): Promise<Json> {
  return JSON.parse(await readFile(path, 'utf8')) as Json;
}

export async function readPublishedWhisper(dir: string): Promise<PublishedWhisperConfigs> {
  const [config, generation, preprocessor, tokenizer] = await Promise.all(
    ['config.json', 'generation_config.json', 'preprocessor_config.json', 'tokenizer.json'].map((f) =>
      readJson(join(dir, f)),
    ),
  );
  return { config: config!, generation: generation!, preprocessor: preprocessor!, tokenizer: tokenizer! };
}

/** The published folder's ids, mel bins and prompt shape; throws on a folder that is not Whisper's. */
export function publishedWhisperLayout({
  config,
  generation,
  preprocessor,
  tokenizer,
}: PublishedWhisperConfigs): PublishedWhisperLayout {
  if (config['model_type'] !== 'whisper') throw new Error('config.json: model_type is not "whisper"');
  const added = new Map(
    ((tokenizer['added_tokens'] ?? []) as { content: string; id: number }[]).map((t) => [t.content, t.id]),
  );
  const endOfText = number(
    generation['eos_token_id'] !== undefined ? generation : config,
    'eos_token_id',
    'generation_config.json',
  );
  const noTimestamps =
    generation['no_timestamps_token_id'] !== undefined
      ? number(generation, 'no_timestamps_token_id', 'generation_config.json')
      : added.get('<|notimestamps|>');
  if (noTimestamps === undefined) throw new Error('no <|notimestamps|> token: not a Whisper vocabulary');
  const end = number(config, 'vocab_size', 'config.json');
  const timestampBegin = noTimestamps + 1;
  if (end - timestampBegin !== TIMESTAMP_COUNT) {
    throw new Error(
      `config.json: vocab_size ${end} leaves ${end - timestampBegin} timestamp ids after <|notimestamps|> (${noTimestamps}), not ${TIMESTAMP_COUNT}`,
    );
  }
  const melBins = number(preprocessor, 'feature_size', 'preprocessor_config.json');
  if (config['num_mel_bins'] !== undefined && config['num_mel_bins'] !== melBins) {
    throw new Error(
      `config.json's num_mel_bins (${JSON.stringify(config['num_mel_bins'])}) differs from preprocessor_config.json's feature_size (${melBins})`,
    );
  }
  const vocab = ((tokenizer['model'] as Json | undefined)?.['vocab'] ?? {}) as Record<string, number>;
  const textTokens = new Array<string>(endOfText).fill('\u0000');
  for (const [token, id] of Object.entries(vocab)) if (id < endOfText) textTokens[id] = token;
  const langToId = generation['lang_to_id'] as Json | undefined;
  const multilingual =
    typeof generation['is_multilingual'] === 'boolean'
      ? generation['is_multilingual']
      : Object.keys(langToId ?? {}).length > 0;
  return {
    ids: { endOfText, timestampBegin, end },
    textTokens,
    multilingual,
    melBins,
    maxSourcePositions: number(config, 'max_source_positions', 'config.json'),
    maxTargetPositions: number(config, 'max_target_positions', 'config.json'),
  };
}

const json = (value: object): Uint8Array => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

/** The files of a random-weight Whisper for these published configs; the same options give the same bytes. */
export function whisperFromConfigFiles(
  configs: PublishedWhisperConfigs,
  options: WhisperFromConfigOptions = {},
): WhisperFromConfig {
  const seed = options.seed ?? 0;
  const layout = publishedWhisperLayout(configs);
  const dModel = options.dModel ?? 32;
  const heads = options.heads ?? 4;
  const ffn = options.ffnDim ?? dModel * 4;
  const shape: WhisperShape = {
    vocabSize: layout.ids.end,
    dModel,
    encoderLayers: options.encoderLayers ?? 2,
    encoderHeads: heads,
    encoderFfnDim: ffn,
    decoderLayers: options.decoderLayers ?? 2,
    decoderHeads: heads,
    decoderFfnDim: ffn,
    melBins: layout.melBins,
    maxSourcePositions: layout.maxSourcePositions,
    maxTargetPositions: layout.maxTargetPositions,
    layerNormEps: 1e-5,
  };
  if (shape.maxSourcePositions * 2 !== AUDIO.frames) {
    throw new Error(`config.json: max_source_positions must be ${AUDIO.frames / 2}`);
  }
  const encoderRng = new Random(seed);
  const decoderRng = new Random(seed ^ 0x5eed);
  const encoder = serializeModel(buildEncoderGraph(shape, encoderRng), {
    docString: 'Random-weight Whisper encoder for a published Whisper config, for development and tests.',
    metadata: { seed: String(seed) },
  });
  const decoder = serializeModel(
    buildDecoderGraph(shape, decoderRng, {
      embedTokens: tokenEmbeddings(decoderRng, layout.ids, dModel),
      finalLogitsBias: finalLogitsBias(layout.textTokens, layout.ids),
      ids: layout.ids,
      // English-only prompts are <|startoftranscript|> alone; multilingual ones add language and task.
      promptEnd: layout.multilingual ? PROMPT_END : 0,
    }),
    {
      docString: 'Random-weight Whisper decoder (merged, with KV cache) for a published Whisper config.',
      metadata: { seed: String(seed) },
    },
  );
  const config = {
    ...configs.config,
    d_model: dModel,
    encoder_layers: shape.encoderLayers,
    decoder_layers: shape.decoderLayers,
    num_hidden_layers: shape.encoderLayers,
    encoder_attention_heads: heads,
    decoder_attention_heads: heads,
    encoder_ffn_dim: ffn,
    decoder_ffn_dim: ffn,
    [DEV_MODEL_MARKER]: {
      description:
        'Random-weight development model built by @switchboard/models-dev on a published Whisper tokenizer and configs; its transcripts are noise.',
      seed,
    },
  };
  const files = new Map<string, Uint8Array>([
    ['config.json', json(config)],
    ['onnx/encoder_model.onnx', encoder],
    ['onnx/decoder_model_merged.onnx', decoder],
  ]);
  return { shape, seed, layout, files };
}

/**
 * Adds random weights to the published Whisper folder `dir` (a copy: config.json is rewritten
 * with small dimensions, onnx/ is added; the other files stay as they are).
 */
export async function buildWhisperFromConfig(
  dir: string,
  options: WhisperFromConfigOptions = {},
): Promise<WhisperFromConfig> {
  const model = whisperFromConfigFiles(await readPublishedWhisper(dir), options);
  // A copy of a read-only folder keeps its modes; the files written here must be replaceable.
  await chmod(dir, 0o755);
  for (const [path, bytes] of model.files) {
    const target = join(dir, path);
    await mkdir(dirname(target), { recursive: true });
    await rm(target, { force: true });
    await writeFile(target, bytes);
  }
  return model;
}
