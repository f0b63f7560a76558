import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let source: string | undefined;

/**
 * `@mozilla/readability`'s own scripts, to be run inside the page's isolated world (where they
 * define `Readability` and `isProbablyReaderable`), read once per process.
 */
export function readabilitySource(): string {
  if (source === undefined) {
    const require = createRequire(import.meta.url);
    const read = (file: string) => readFileSync(require.resolve(`@mozilla/readability/${file}`), 'utf8');
    source = `${read('Readability.js')}\n${read('Readability-readerable.js')}\n`;
  }
  return source;
}
