// The JSON files of an SVD-style model folder and the numbers the back-end takes from them, with
// SVD's values where a file or key is absent. Parts named in model_index.json must be present.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClipPreprocessing } from './video-model.js';
import { parseVideoSchedulerConfig, type VideoSchedulerConfig } from './scheduler-config.js';

/** The ONNX parts, each `<part>/model.onnx`. */
export const ONNX_PARTS = ['image_encoder', 'vae_encoder', 'unet', 'vae_decoder'] as const;
export type OnnxPart = (typeof ONNX_PARTS)[number];

/** SVD's feature_extractor: OpenAI CLIP's mean and std, 224-pixel squares. */
const CLIP_DEFAULTS: ClipPreprocessing = {
  size: 224,
  mean: [0.48145466, 0.4578275, 0.40821073],
  std: [0.26862954, 0.26130258, 0.27577711],
};

export interface PipelineConfigs {
  readonly scheduler: VideoSchedulerConfig;
  readonly clip: ClipPreprocessing;
  readonly latentChannels: number;
  readonly vaeScaleFactor: number;
  readonly scalingFactor: number;
  /** unet/config.json `num_frames`, when it says. */
  readonly framesPerPass: number | undefined;
  /** unet/config.json `sample_size` (latent cells) as [height, width], when it says. */
  readonly sampleSize: readonly [number, number] | undefined;
}

type Json = Record<string, unknown>;
const readJson = async (path: string): Promise<Json> => JSON.parse(await readFile(path, 'utf8')) as Json;
const optionalJson = async (path: string): Promise<Json> => (existsSync(path) ? readJson(path) : {});

const positiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
const triple = (v: unknown): [number, number, number] | undefined =>
  Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number')
    ? [v[0] as number, v[1] as number, v[2] as number]
    : undefined;

/** diffusers writes `sample_size` as one side or as [height, width]. */
function sides(value: unknown): [number, number] | undefined {
  if (positiveInt(value)) return [value, value];
  if (Array.isArray(value) && value.length === 2 && value.every(positiveInt)) {
    return [value[0] as number, value[1] as number];
  }
  return undefined;
}

/** crop_size as {height, width} (a square here) or a number; the CLIP encoder takes squares. */
function clipPreprocessing(json: Json): ClipPreprocessing {
  const crop = json['crop_size'];
  const size = positiveInt(crop)
    ? crop
    : typeof crop === 'object' && crop !== null && positiveInt((crop as Json)['height'])
      ? ((crop as Json)['height'] as number)
      : CLIP_DEFAULTS.size;
  return {
    size,
    mean: triple(json['image_mean']) ?? CLIP_DEFAULTS.mean,
    std: triple(json['image_std']) ?? CLIP_DEFAULTS.std,
  };
}

export async function readPipelineConfigs(dir: string): Promise<PipelineConfigs> {
  const index = await readJson(join(dir, 'model_index.json'));
  for (const part of [...ONNX_PARTS, 'scheduler']) {
    const entry = index[part];
    if (!Array.isArray(entry) || entry[0] === null) throw new Error(`model_index.json names no ${part}`);
  }
  const scheduler = parseVideoSchedulerConfig(
    await readJson(join(dir, 'scheduler', 'scheduler_config.json')),
  );
  const preprocessor = await optionalJson(join(dir, 'feature_extractor', 'preprocessor_config.json'));
  const unet = await optionalJson(join(dir, 'unet', 'config.json'));
  const vae = {
    ...(await optionalJson(join(dir, 'vae_encoder', 'config.json'))),
    ...(await optionalJson(join(dir, 'vae_decoder', 'config.json'))),
  };
  const latentChannels = positiveInt(vae['latent_channels']) ? vae['latent_channels'] : 4;
  const blocks = Array.isArray(vae['block_out_channels']) ? vae['block_out_channels'].length : 4;
  return {
    scheduler,
    clip: clipPreprocessing(preprocessor),
    latentChannels,
    vaeScaleFactor: 2 ** (blocks - 1),
    scalingFactor: typeof vae['scaling_factor'] === 'number' ? vae['scaling_factor'] : 0.18215,
    framesPerPass: positiveInt(unet['num_frames']) ? unet['num_frames'] : undefined,
    sampleSize: sides(unet['sample_size']),
  };
}
