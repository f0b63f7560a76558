// A tiny Llama-family model folder in the layout Transformers.js loads from a model repository:
// config.json, generation_config.json, tokenizer.json, tokenizer_config.json (with a ChatML chat
// template), onnx/model.onnx.
import { serializeModel } from '../onnx/serialize.js';
import { Random } from '../random.js';
import { buildTinyTokenizer } from '../tokenizer/files.js';
import { writeModelFolder } from '../write.js';
import { CHATML_CHAT_TEMPLATE } from './chat-template.js';
import { generationConfigJson, llamaConfigJson, type LlamaShape } from './config.js';
import { buildLlamaGraph } from './graph.js';

export interface TinyLlamaOptions {
  readonly seed?: number;
  readonly layers?: number;
  readonly hiddenSize?: number;
  readonly intermediateSize?: number;
  readonly heads?: number;
  readonly kvHeads?: number;
  readonly maxPositions?: number;
  /**
   * The exact vocabulary size, special tokens included (e.g. 128,256 as Llama 3): the tokenizer
   * gets synthetic merges up to it. By default, only the merges learned from the small corpus.
   */
  readonly vocabSize?: number;
  /**
   * Multiplies lm_head's initial scale (default 1, logits of standard deviation about 1): about 4
   * gives logits as peaked as a trained model's, a few nats of entropy at temperature 1.
   */
  readonly logitScale?: number;
}

export interface TinyLlama {
  readonly shape: LlamaShape;
  readonly seed: number;
  /** File contents by path relative to the model folder, in a fixed order. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const json = (value: object): Uint8Array => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);

/** Builds the files of a tiny random-weight Llama in memory; the same options give the same bytes. */
export function tinyLlamaFiles(options: TinyLlamaOptions = {}): TinyLlama {
  const seed = options.seed ?? 0;
  const hiddenSize = options.hiddenSize ?? 32;
  const heads = options.heads ?? 4;
  const maxPositions = options.maxPositions ?? 2048;
  const tokenizer = buildTinyTokenizer({
    modelMaxLength: maxPositions,
    ...(options.vocabSize === undefined ? {} : { vocabSize: options.vocabSize }),
  });
  const shape: LlamaShape = {
    vocabSize: tokenizer.vocabSize,
    hiddenSize,
    intermediateSize: options.intermediateSize ?? hiddenSize * 2,
    layers: options.layers ?? 2,
    heads,
    kvHeads: options.kvHeads ?? 2,
    headDim: hiddenSize / heads,
    maxPositions,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
  };
  if (!Number.isInteger(shape.headDim)) throw new Error('hiddenSize must be a multiple of heads');
  const ids = { bos: tokenizer.bosTokenId, eos: tokenizer.eosTokenId, pad: tokenizer.padTokenId };
  const model = serializeModel(
    buildLlamaGraph(shape, new Random(seed), { logitScale: options.logitScale ?? 1 }),
    {
      docString: 'Tiny random-weight Llama-family decoder for development and tests.',
      metadata: { seed: String(seed) },
    },
  );
  const files = new Map<string, Uint8Array>([
    ['config.json', json(llamaConfigJson(shape, ids, seed))],
    ['generation_config.json', json(generationConfigJson(ids))],
    ['tokenizer.json', json(tokenizer.tokenizerJson)],
    ['tokenizer_config.json', json({ ...tokenizer.tokenizerConfig, chat_template: CHATML_CHAT_TEMPLATE })],
    ['onnx/model.onnx', model],
  ]);
  return { shape, seed, files };
}

/** Writes a tiny Llama into `dir` (which must not exist or be empty) and returns what it wrote. */
export async function buildTinyLlama(dir: string, options: TinyLlamaOptions = {}): Promise<TinyLlama> {
  const model = tinyLlamaFiles(options);
  await writeModelFolder(dir, model.files);
  return model;
}
