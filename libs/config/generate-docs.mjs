#!/usr/bin/env node
// Generates docs/configuration.md, the reference of every environment variable, from the
// services' own config schemas: each services/<name>/src/config.ts exports `<name>EnvSchema`, whose
// fields carry their descriptions (`.describe('…')`) and defaults.
//
//   node libs/config/generate-docs.mjs           write docs/configuration.md
//   node libs/config/generate-docs.mjs --check   render in memory; exit 1 when the committed file differs
//
// The schemas come from the services' builds, so they must be built first: `npm run config:docs`
// and `npm run config:check` build them. The file is formatted with the repository's prettier
// settings, so `prettier --check` and this check agree.
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const target = join(repoRoot, 'docs', 'configuration.md');
const generator = 'libs/config/generate-docs.mjs';

function fail(message) {
  console.error(message);
  process.exit(1);
}

async function importBuilt(path, buildHint) {
  if (!existsSync(path)) fail(`${path} is missing: build first (\`${buildHint}\`)`);
  return import(pathToFileURL(path).href);
}

/** Every service with a config schema; the gateway first (it is what clients meet), then by name. */
async function services() {
  const names = readdirSync(join(repoRoot, 'services'))
    .filter((name) => existsSync(join(repoRoot, 'services', name, 'src', 'config.ts')))
    .sort((a, b) => (a === 'gateway' ? -1 : b === 'gateway' ? 1 : a.localeCompare(b)));
  return Promise.all(
    names.map(async (name) => {
      const module = await importBuilt(
        join(repoRoot, 'services', name, 'dist', 'config.js'),
        `tsc -b services/${name}`,
      );
      const schema = module[`${name}EnvSchema`];
      if (schema?.shape === undefined) fail(`services/${name}/src/config.ts must export ${name}EnvSchema`);
      return { name, source: `services/${name}/src/config.ts`, schema };
    }),
  );
}

async function render() {
  const { renderConfigurationDoc } = await importBuilt(join(here, 'dist', 'index.js'), 'tsc -b libs/config');
  let markdown;
  try {
    markdown = renderConfigurationDoc(await services(), generator);
  } catch (error) {
    fail(error.message);
  }
  const options = (await prettier.resolveConfig(target)) ?? {};
  return prettier.format(markdown, { ...options, filepath: target });
}

const wanted = await render();
const relativeTarget = 'docs/configuration.md';
if (process.argv.includes('--check')) {
  const have = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
  if (have !== wanted) {
    fail(
      `${relativeTarget} is ${have === undefined ? 'missing' : 'stale'}: the config schemas changed. Run \`npm run config:docs\`.`,
    );
  }
  console.log(`${relativeTarget} matches the config schemas`);
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, wanted);
  console.log(`wrote ${relativeTarget}`);
}
