import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildTinyDiffusion,
  buildTinyLlama,
  buildTinyPortrait,
  buildTinyVideoDiffusion,
  buildTinyWhisper,
} from '@switchboard/models-dev';

/**
 * Tiny random-weight development models, built by the project's own code into an empty model
 * repository so `npm start` works out of the box. A model folder that already holds a model (a
 * real export the operator dropped in) is never touched.
 */
interface DevModel {
  /** The folder under MODEL_DIR the worker reads. */
  readonly folder: string;
  readonly id: string;
  readonly build: (dir: string) => Promise<unknown>;
}

const builders: Record<string, readonly DevModel[]> = {
  llm: [{ folder: 'llm', id: 'tiny-llama-dev', build: (dir) => buildTinyLlama(dir, { seed: 0 }) }],
  whisper: [
    { folder: 'whisper', id: 'tiny-whisper-dev', build: (dir) => buildTinyWhisper(dir, { seed: 0 }) },
  ],
  diffusion: [
    { folder: 'diffusion', id: 'tiny-sd-dev', build: (dir) => buildTinyDiffusion(dir, { seed: 0 }) },
  ],
  // The animation worker reads two model folders; its avatar back-end needs no model.
  animation: [
    {
      folder: 'video-diffusion',
      id: 'tiny-svd-dev',
      build: (dir) => buildTinyVideoDiffusion(dir, { seed: 0 }),
    },
    { folder: 'portrait', id: 'tiny-liveportrait-dev', build: (dir) => buildTinyPortrait(dir, { seed: 0 }) },
  ],
};

/** Files that make a folder a model: the Transformers.js and diffusers layouts, and LivePortrait's set. */
const MODEL_MARKERS = ['config.json', 'model_index.json', 'warping_spade.onnx'];

function holdsModel(folder: string): boolean {
  if (!existsSync(folder)) return false;
  return readdirSync(folder, { withFileTypes: true }).some(
    (entry) =>
      entry.isDirectory() && MODEL_MARKERS.some((marker) => existsSync(join(folder, entry.name, marker))),
  );
}

/** Builds the development models of a worker whose folders hold none; says what it did. */
export async function ensureDevModel(modelDir: string, worker: string): Promise<string | undefined> {
  const notices: string[] = [];
  for (const model of builders[worker] ?? []) {
    const folder = join(modelDir, model.folder);
    if (holdsModel(folder)) continue;
    await model.build(join(folder, model.id));
    notices.push(
      `${model.folder}: built the tiny random-weight development model ${model.id} into ${folder} (not a real model; see README, "Running real models")`,
    );
  }
  return notices.length > 0 ? notices.join('\n') : undefined;
}
