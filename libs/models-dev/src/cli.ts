#!/usr/bin/env node
// `models-dev build-llm <dir> [--seed N]`: writes a tiny random-weight Llama model folder.
// Workers call this at start-up to fill an empty model repository for development.
import { parseArgs } from 'node:util';
import { buildTinyLlama } from './llama/build.js';

const USAGE = 'usage: models-dev build-llm <dir> [--seed N]';

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { seed: { type: 'string', default: '0' } },
  });
  const [command, dir, ...rest] = positionals;
  const seed = Number(values.seed);
  if (command !== 'build-llm' || dir === undefined || rest.length > 0 || !Number.isSafeInteger(seed)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { shape, files } = await buildTinyLlama(dir, { seed });
  const bytes = [...files.values()].reduce((n, f) => n + f.byteLength, 0);
  process.stdout.write(
    `wrote a tiny random-weight development model (llama, ${shape.layers} layers, hidden ${shape.hiddenSize}, ` +
      `vocab ${shape.vocabSize}, seed ${seed}, ${bytes} bytes) to ${dir}\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`models-dev: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
