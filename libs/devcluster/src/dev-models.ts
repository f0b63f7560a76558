import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildTinyDiffusion, buildTinyLlama, buildTinyWhisper } from '@switchboard/models-dev';

/**
 * Tiny random-weight development models, built by the project's own code into an empty model
 * repository so `npm start` works out of the box. A capability folder that already holds a
 * model (a real export the operator dropped in) is never touched.
 */
const builders: Record<string, { id: string; build: (dir: string) => Promise<unknown> }> = {
  llm: { id: 'tiny-llama-dev', build: (dir) => buildTinyLlama(dir, { seed: 0 }) },
  whisper: { id: 'tiny-whisper-dev', build: (dir) => buildTinyWhisper(dir, { seed: 0 }) },
  diffusion: { id: 'tiny-sd-dev', build: (dir) => buildTinyDiffusion(dir, { seed: 0 }) },
};

function holdsModel(capabilityDir: string): boolean {
  if (!existsSync(capabilityDir)) return false;
  return readdirSync(capabilityDir, { withFileTypes: true }).some(
    (entry) =>
      entry.isDirectory() &&
      (existsSync(join(capabilityDir, entry.name, 'config.json')) ||
        existsSync(join(capabilityDir, entry.name, 'model_index.json'))),
  );
}

/** Builds the development model of `capability` when its folder holds none; says what it did. */
export async function ensureDevModel(modelDir: string, capability: string): Promise<string | undefined> {
  const builder = builders[capability];
  const capabilityDir = join(modelDir, capability);
  if (!builder || holdsModel(capabilityDir)) return undefined;
  await builder.build(join(capabilityDir, builder.id));
  return `${capability}: built the tiny random-weight development model ${builder.id} into ${capabilityDir} (not a real model; see README, "Running real models")`;
}
