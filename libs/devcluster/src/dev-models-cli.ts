import { pathToFileURL } from 'node:url';
import { ensureDevModel } from './dev-models.js';

/**
 * `node dev-models-cli.js <worker> <model dir>`: builds a model worker's tiny random-weight
 * development models into its model repository, unless they are there. The chart's init container
 * runs it (models.devModels) in a development image, so a worker deployed alone by
 * `skaffold dev -m <worker>` loads models and reports SERVING. Exit status 2 on a usage error.
 */

/** The workers that read models, as the chart's usesModels marks them. */
export const modelWorkers = ['llm', 'whisper', 'diffusion', 'animation'] as const;

export interface CliOutput {
  log(line: string): void;
  error(line: string): void;
}

export async function runDevModelsCli(args: readonly string[], out: CliOutput): Promise<number> {
  const [worker, modelDir, ...rest] = args;
  if (!worker || !modelDir || rest.length > 0 || !(modelWorkers as readonly string[]).includes(worker)) {
    out.error(`usage: dev-models-cli <${modelWorkers.join('|')}> <model dir>`);
    return 2;
  }
  const notice = await ensureDevModel(modelDir, worker);
  out.log(notice ?? `${worker}: ${modelDir} already holds its models; nothing built`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runDevModelsCli(process.argv.slice(2), console).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = 1;
    },
  );
}
