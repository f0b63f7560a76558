// A tiny random-weight Stable-Diffusion-style pipeline folder in the diffusers ONNX layout, the
// layout the diffusion worker loads: model_index.json, scheduler/scheduler_config.json,
// tokenizer/ (CLIPTokenizer files), text_encoder/, unet/ and vae_decoder/ (model.onnx and
// config.json each). A few hundred kilobytes; the same options give the same bytes.
import { serializeFloat16Model } from '../onnx/float16.js';
import { serializeModel } from '../onnx/serialize.js';
import { Random } from '../random.js';
import { writeModelFolder } from '../write.js';
import {
  modelIndexJson,
  textEncoderConfigJson,
  unetConfigJson,
  vaeDecoderConfigJson,
  type ClipTokenIds,
  type DiffusionShape,
} from './config.js';
import { schedulerConfigJson, type SchedulerKind } from './scheduler.js';
import { buildTextEncoderGraph } from './text-encoder.js';
import { buildClipTokenizer } from './tokenizer.js';
import { buildUnetGraph } from './unet.js';
import { buildVaeDecoderGraph } from './vae-decoder.js';

export interface TinyDiffusionOptions {
  readonly seed?: number;
  /** Which scheduler_config.json to write (default Euler discrete). */
  readonly scheduler?: SchedulerKind;
  /**
   * Rows of the text encoder's token embedding (default: the tiny tokenizer's vocabulary). 49408
   * lets the graphs run under a published CLIP tokenizer (ids up to 49407).
   */
  readonly vocabSize?: number;
  /**
   * "fp16": graphs shaped like a diffusers fp16 export: float16 weights, float16 latents, hidden
   * states, images and UNet timestep at the edges (computing in float32 inside).
   */
  readonly dtype?: 'fp32' | 'fp16';
}

export interface TinyDiffusion {
  readonly shape: DiffusionShape;
  readonly seed: number;
  readonly ids: ClipTokenIds;
  /** File contents by path relative to the model folder, in a fixed order. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const encoder = new TextEncoder();
const json = (value: object): Uint8Array => encoder.encode(`${JSON.stringify(value, null, 2)}\n`);

/** Builds the files of a tiny random-weight diffusion pipeline in memory. */
export function tinyDiffusionFiles(options: TinyDiffusionOptions = {}): TinyDiffusion {
  const seed = options.seed ?? 0;
  const scheduler = options.scheduler ?? 'euler';
  const tokenizer = buildClipTokenizer({ modelMaxLength: 77 });
  const shape: DiffusionShape = {
    vocabSize: options.vocabSize ?? tokenizer.vocabSize,
    maxPositions: 77,
    textHidden: 32,
    textLayers: 2,
    textHeads: 2,
    textIntermediate: 64,
    latentChannels: 4,
    unetChannels: [16, 32],
    unetHeads: 2,
    timeFeatures: 32,
    timeEmbedDim: 64,
    vaeChannels: [8, 8, 16, 16],
    normGroups: 4,
    layerNormEps: 1e-5,
    scalingFactor: 0.18215,
  };
  const { ids } = tokenizer;
  // One stream per graph, each from its own derived seed, so that changing how one component
  // is built leaves the others' weights as they were.
  const fp16 = options.dtype === 'fp16';
  const model = (graph: Parameters<typeof serializeModel>[0], what: string, halfInputs: string[] = []) => {
    const modelOptions = {
      docString: `Tiny random-weight ${what} for development and tests${fp16 ? ' (fp16)' : ''}.`,
      metadata: { seed: String(seed) },
    };
    return fp16
      ? serializeFloat16Model(graph, modelOptions, halfInputs)
      : serializeModel(graph, modelOptions);
  };
  const textEncoder = model(buildTextEncoderGraph(shape, new Random(seed)), 'CLIP text encoder');
  // diffusers' fp16 ONNX exports take the UNet timestep as float16 too.
  const unet = model(buildUnetGraph(shape, new Random(seed ^ 0x0e7)), 'conditional UNet', ['timestep']);
  const vae = model(buildVaeDecoderGraph(shape, new Random(seed ^ 0xae)), 'VAE decoder');

  const files = new Map<string, Uint8Array>([
    ['model_index.json', json(modelIndexJson(scheduler, seed))],
    ['scheduler/scheduler_config.json', json(schedulerConfigJson(scheduler))],
    ...[...tokenizer.files].map(([name, text]): [string, Uint8Array] => [
      `tokenizer/${name}`,
      encoder.encode(text),
    ]),
    ['text_encoder/config.json', json(textEncoderConfigJson(shape, ids))],
    ['text_encoder/model.onnx', textEncoder],
    ['unet/config.json', json(unetConfigJson(shape))],
    ['unet/model.onnx', unet],
    ['vae_decoder/config.json', json(vaeDecoderConfigJson(shape))],
    ['vae_decoder/model.onnx', vae],
  ]);
  return { shape, seed, ids, files };
}

/** Writes a tiny diffusion pipeline into `dir` (which must not exist or be empty). */
export async function buildTinyDiffusion(
  dir: string,
  options: TinyDiffusionOptions = {},
): Promise<TinyDiffusion> {
  const pipeline = tinyDiffusionFiles(options);
  await writeModelFolder(dir, pipeline.files);
  return pipeline;
}
