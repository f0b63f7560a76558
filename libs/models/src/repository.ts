// The model repository: MODEL_DIR/<capability>/<model-id>/ in the Hugging Face ONNX export layouts.
// A folder is a model when it has config.json (Transformers.js layout) or model_index.json
// (the diffusers layout), or, for a capability whose published models come as bare ONNX sets
// without a config (LivePortrait), when it holds every file the caller names; anything else in
// the capability folder is ignored.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ModelEntry {
  /** The folder name: what clients pass as `model`. */
  readonly id: string;
  readonly dir: string;
  /** Free text for operators, shown in /models (the tiny development models say so here). */
  readonly description: string;
  /** A random-weight model built by @switchboard/models-dev (its config carries DEV_MODEL_KEY). */
  readonly development?: boolean;
}

export interface RepositoryScan {
  readonly capabilityDir: string;
  readonly models: readonly ModelEntry[];
  /** Undefined only when there is no model at all. */
  readonly defaultId: string | undefined;
}

/**
 * The key @switchboard/models-dev writes into a development model's config.json
 * (DEV_MODEL_MARKER there; repository.test.ts checks the two agree). Read here, rather than
 * imported, so production workers do not depend on the model builder.
 */
export const DEV_MODEL_KEY = 'switchboard_dev_model';

/** Manifest beside the models: `{ "default": "<id>" }`. Optional. */
export const MANIFEST_FILE = 'models.json';

const MODEL_MARKERS = ['config.json', 'model_index.json'];

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8')) as unknown;
}

/** The development-model mark in the folder's config (config.json, or a pipeline's model_index.json). */
async function describe(dir: string): Promise<{ description: string; development: boolean }> {
  const marker = MODEL_MARKERS.find((m) => existsSync(join(dir, m)));
  if (marker === undefined) return { description: '', development: false };
  try {
    const config = (await readJson(join(dir, marker))) as Record<string, unknown>;
    const dev = config[DEV_MODEL_KEY] as { description?: unknown } | undefined;
    return {
      description: typeof dev?.description === 'string' ? dev.description : '',
      development: dev !== undefined,
    };
  } catch {
    // An unreadable config fails the load later, with its reason logged there.
    return { description: '', development: false };
  }
}

export interface ScanOptions {
  /** `<CAPABILITY>_DEFAULT_MODEL` from the worker's config; wins over the manifest. */
  readonly defaultModel?: string | undefined;
  /**
   * Paths (relative to a model folder) that make a folder a model instead of config.json or
   * model_index.json: it counts when it holds every one of them. For published ONNX sets that
   * come without a config; a config.json, when present, still supplies the description.
   */
  readonly requiredFiles?: readonly string[] | undefined;
}

function isModelFolder(dir: string, requiredFiles: readonly string[] | undefined): boolean {
  if (requiredFiles !== undefined) return requiredFiles.every((f) => existsSync(join(dir, f)));
  return MODEL_MARKERS.some((m) => existsSync(join(dir, m)));
}

/**
 * Lists the models of one capability and picks its default: the configured one, else the
 * manifest's, else the only (or alphabetically first) model. A configured or manifest default
 * that names no model is an error: silently serving another model would surprise the operator.
 */
export async function scanRepository(
  modelDir: string,
  capability: string,
  options: ScanOptions = {},
): Promise<RepositoryScan> {
  const capabilityDir = join(modelDir, capability);
  const entries = existsSync(capabilityDir) ? await readdir(capabilityDir, { withFileTypes: true }) : [];
  const ids = entries
    .filter((e) => e.isDirectory() && isModelFolder(join(capabilityDir, e.name), options.requiredFiles))
    .map((e) => e.name)
    .sort();
  const models = await Promise.all(
    ids.map(async (id) => {
      const dir = join(capabilityDir, id);
      return { id, dir, ...(await describe(dir)) };
    }),
  );

  let defaultId = options.defaultModel;
  let source = 'configured default model';
  if (defaultId === undefined && existsSync(join(capabilityDir, MANIFEST_FILE))) {
    const manifest = (await readJson(join(capabilityDir, MANIFEST_FILE))) as { default?: unknown };
    if (typeof manifest.default === 'string') defaultId = manifest.default;
    source = `default in ${join(capabilityDir, MANIFEST_FILE)}`;
  }
  if (defaultId !== undefined && !ids.includes(defaultId)) {
    throw new Error(`${source} "${defaultId}" is not a model folder in ${capabilityDir}`);
  }
  return { capabilityDir, models, defaultId: defaultId ?? ids[0] };
}
