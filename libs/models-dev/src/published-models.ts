// Where tests and benchmarks find the published model files: real trained language models, real
// Whisper tokenizers and configs, a Stable Diffusion export layout. They are kept outside the
// repository, in a `shared/models` folder beside the checkout (CI keeps them there), and are never
// copied into it. `SWITCHBOARD_MODELS_DIR` points elsewhere. A test that needs them skips, saying
// which folder it needs, when they are not there; nothing in production imports this file.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The variable that overrides where the published model files are. */
export const MODELS_DIR_VARIABLE = 'SWITCHBOARD_MODELS_DIR';

/**
 * The environment, read live. This is test support, not a service: no config schema applies, and
 * a test may set the variable before it asks.
 */
// eslint-disable-next-line no-restricted-properties
const environment = process.env;

/** The default: `shared/models` beside the checkout (this file runs from libs/models-dev/dist). */
const besideCheckout = fileURLToPath(new URL('../../../../shared/models', import.meta.url));

/** The published model files' folder: `SWITCHBOARD_MODELS_DIR`, else the default beside the checkout. */
export function publishedModelsDir(): string {
  const override = environment[MODELS_DIR_VARIABLE];
  return override !== undefined && override !== '' ? resolve(override) : besideCheckout;
}

/** The path of `parts` (e.g. `'llm', 'stories260K'`) inside the published model files. */
export function publishedModelPath(...parts: string[]): string {
  return join(publishedModelsDir(), ...parts);
}

/** How a reason names the folder: relative to the checkout by default, else the path given. */
function shown(parts: string[]): string {
  const override = environment[MODELS_DIR_VARIABLE];
  const root = override !== undefined && override !== '' ? resolve(override) : '../shared/models';
  return [root, ...parts].join('/');
}

/**
 * For node:test's `skip` option — `test(name, { skip: needsPublishedModels('llm', 'x') }, …)` —
 * or for `t.skip(reason)`: `false` when the folder is there, else the reason naming it, e.g.
 * `needs the published model files (../shared/models/llm/TinyStories-656K)`.
 */
export function needsPublishedModels(...parts: string[]): string | false {
  return existsSync(publishedModelPath(...parts))
    ? false
    : `needs the published model files (${shown(parts)})`;
}

/** For benchmarks and helpers that cannot skip: the folder's path, or an error naming it. */
export function requirePublishedModels(...parts: string[]): string {
  const missing = needsPublishedModels(...parts);
  if (missing !== false) {
    throw new Error(`${missing}; set ${MODELS_DIR_VARIABLE} to the folder that holds them`);
  }
  return publishedModelPath(...parts);
}
