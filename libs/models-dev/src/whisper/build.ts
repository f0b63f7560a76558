// A tiny Whisper model folder in the layout Transformers.js loads from a model repository:
// config.json, generation_config.json, preprocessor_config.json, tokenizer.json,
// tokenizer_config.json, onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx.
import { serializeModel } from '../onnx/serialize.js';
import { Random } from '../random.js';
import { writeModelFolder } from '../write.js';
import {
  generationConfigJson,
  preprocessorConfigJson,
  whisperConfigJson,
  type WhisperShape,
} from './config.js';
import { buildDecoderGraph } from './decoder.js';
import { buildEncoderGraph } from './encoder.js';
import { finalLogitsBias, tokenEmbeddings } from './logits-prior.js';
import { buildWhisperTokenizer } from './tokenizer.js';
import type { WhisperTokenIds } from './tokens.js';

export interface TinyWhisperOptions {
  readonly seed?: number;
  readonly dModel?: number;
  readonly encoderLayers?: number;
  readonly decoderLayers?: number;
  readonly heads?: number;
  readonly ffnDim?: number;
}

export interface TinyWhisper {
  readonly shape: WhisperShape;
  readonly seed: number;
  readonly ids: WhisperTokenIds;
  /** File contents by path relative to the model folder, in a fixed order. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const json = (value: object): Uint8Array => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

/** Builds the files of a tiny random-weight Whisper in memory; the same options give the same bytes. */
export function tinyWhisperFiles(options: TinyWhisperOptions = {}): TinyWhisper {
  const seed = options.seed ?? 0;
  const dModel = options.dModel ?? 32;
  const heads = options.heads ?? 4;
  const maxTargetPositions = 448;
  const tokenizer = buildWhisperTokenizer({ modelMaxLength: maxTargetPositions });
  const shape: WhisperShape = {
    vocabSize: tokenizer.vocabSize,
    dModel,
    encoderLayers: options.encoderLayers ?? 2,
    encoderHeads: heads,
    encoderFfnDim: options.ffnDim ?? dModel * 4,
    decoderLayers: options.decoderLayers ?? 2,
    decoderHeads: heads,
    decoderFfnDim: options.ffnDim ?? dModel * 4,
    melBins: 80,
    maxSourcePositions: 1500,
    maxTargetPositions,
    layerNormEps: 1e-5,
  };
  const { ids } = tokenizer;
  // One stream per graph (the decoder's from a derived seed), so that a change to one graph's
  // construction leaves the other's weights as they were.
  const encoderRng = new Random(seed);
  const decoderRng = new Random(seed ^ 0x5eed);
  const encoder = serializeModel(buildEncoderGraph(shape, encoderRng), {
    docString: 'Tiny random-weight Whisper encoder for development and tests.',
    metadata: { seed: String(seed) },
  });
  const decoder = serializeModel(
    buildDecoderGraph(shape, decoderRng, {
      embedTokens: tokenEmbeddings(decoderRng, ids, dModel),
      finalLogitsBias: finalLogitsBias(tokenizer.textTokens, ids),
      ids,
    }),
    {
      docString: 'Tiny random-weight Whisper decoder (merged, with KV cache) for development and tests.',
      metadata: { seed: String(seed) },
    },
  );
  const files = new Map<string, Uint8Array>([
    ['config.json', json(whisperConfigJson(shape, ids, seed))],
    [
      'generation_config.json',
      json(
        generationConfigJson({ ids, spaceTokenId: tokenizer.spaceTokenId, maxLength: maxTargetPositions }),
      ),
    ],
    ['preprocessor_config.json', json(preprocessorConfigJson(shape))],
    ['tokenizer.json', json(tokenizer.tokenizerJson)],
    ['tokenizer_config.json', json(tokenizer.tokenizerConfig)],
    ['onnx/encoder_model.onnx', encoder],
    ['onnx/decoder_model_merged.onnx', decoder],
  ]);
  return { shape, seed, ids, files };
}

/** Writes a tiny Whisper into `dir` (which must not exist or be empty) and returns what it wrote. */
export async function buildTinyWhisper(dir: string, options: TinyWhisperOptions = {}): Promise<TinyWhisper> {
  const model = tinyWhisperFiles(options);
  await writeModelFolder(dir, model.files);
  return model;
}
