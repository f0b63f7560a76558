// A tiny random-weight Stable-Video-Diffusion-style pipeline folder, the layout the animation
// worker's video-diffusion back-end loads: model_index.json, scheduler/scheduler_config.json,
// feature_extractor/preprocessor_config.json, and image_encoder/, vae_encoder/, unet/, vae_decoder/
// (model.onnx and config.json each). About a megabyte; the same seed gives the same bytes.
// Native size 64×64 (8×8 latents), 8 frames per UNet pass.
import { serializeModel } from '../onnx/serialize.js';
import type { Graph } from '../onnx/graph.js';
import { Random } from '../random.js';
import { writeModelFolder } from '../write.js';
import {
  imageEncoderConfigJson,
  modelIndexJson,
  preprocessorConfigJson,
  unetConfigJson,
  vaeConfigJson,
  type VideoDiffusionShape,
} from './config.js';
import { buildImageEncoderGraph } from './image-encoder.js';
import { videoSchedulerConfigJson } from './scheduler.js';
import { buildUnetGraph } from './unet.js';
import { buildVaeDecoderGraph } from './vae-decoder.js';
import { buildVaeEncoderGraph } from './vae-encoder.js';

export interface TinyVideoDiffusionOptions {
  readonly seed?: number;
}

export interface TinyVideoDiffusion {
  readonly shape: VideoDiffusionShape;
  readonly seed: number;
  /** File contents by path relative to the model folder, in a fixed order. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

export const TINY_VIDEO_DIFFUSION_SHAPE: VideoDiffusionShape = {
  latentChannels: 4,
  framesPerPass: 8,
  sampleSize: 8,
  imageEmbedDim: 1024,
  imageSize: 224,
  patchSize: 32,
  visionHidden: 32,
  visionHeads: 2,
  visionIntermediate: 64,
  visionLayers: 1,
  unetChannels: [16, 32],
  unetHeads: 2,
  timeEmbedDim: 64,
  additionTimeEmbedDim: 16,
  vaeChannels: [8, 8, 16, 16],
  normGroups: 4,
  layerNormEps: 1e-5,
  scalingFactor: 0.18215,
};

const encoder = new TextEncoder();
const json = (value: object): Uint8Array => encoder.encode(`${JSON.stringify(value, null, 2)}\n`);

/** Builds the files of a tiny random-weight video diffusion pipeline in memory. */
export function tinyVideoDiffusionFiles(options: TinyVideoDiffusionOptions = {}): TinyVideoDiffusion {
  const seed = options.seed ?? 0;
  const shape = TINY_VIDEO_DIFFUSION_SHAPE;
  const model = (graph: Graph, what: string): Uint8Array =>
    serializeModel(graph, {
      docString: `Tiny random-weight ${what} for development and tests.`,
      metadata: { seed: String(seed) },
    });
  // One stream per graph, each from its own derived seed, so that changing how one part is built
  // leaves the others' weights as they were.
  const imageEncoder = model(buildImageEncoderGraph(shape, new Random(seed ^ 0xc11)), 'CLIP vision encoder');
  const vaeEncoder = model(buildVaeEncoderGraph(shape, new Random(seed ^ 0xe2c)), 'VAE encoder');
  const unet = model(buildUnetGraph(shape, new Random(seed ^ 0x57d)), 'spatio-temporal UNet');
  const vaeDecoder = model(buildVaeDecoderGraph(shape, new Random(seed ^ 0xdec)), 'temporal VAE decoder');

  const files = new Map<string, Uint8Array>([
    ['model_index.json', json(modelIndexJson(seed))],
    ['scheduler/scheduler_config.json', json(videoSchedulerConfigJson())],
    ['feature_extractor/preprocessor_config.json', json(preprocessorConfigJson(shape))],
    ['image_encoder/config.json', json(imageEncoderConfigJson(shape))],
    ['image_encoder/model.onnx', imageEncoder],
    ['vae_encoder/config.json', json(vaeConfigJson(shape))],
    ['vae_encoder/model.onnx', vaeEncoder],
    ['unet/config.json', json(unetConfigJson(shape))],
    ['unet/model.onnx', unet],
    ['vae_decoder/config.json', json(vaeConfigJson(shape))],
    ['vae_decoder/model.onnx', vaeDecoder],
  ]);
  return { shape, seed, files };
}

/** Writes a tiny video diffusion pipeline into `dir` (which must not exist or be empty). */
export async function buildTinyVideoDiffusion(
  dir: string,
  options: TinyVideoDiffusionOptions = {},
): Promise<TinyVideoDiffusion> {
  const pipeline = tinyVideoDiffusionFiles(options);
  await writeModelFolder(dir, pipeline.files);
  return pipeline;
}
