#!/usr/bin/env node
// `npm test` after set-up: proto freshness, type-check, lint, then every unit, integration and
// e2e test file under node's test runner. Prints one closing line `N passed, N failed`, where a
// check (proto, tsc, lint) counts as one test and each node:test test counts as itself.
// Plain Node with no dependencies, so it runs before anything else could break.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

let passed = 0;
let failed = 0;

function run(cmd, args, { capture = false, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const relay = (stream, target) =>
      stream.on('data', (chunk) => {
        target.write(chunk);
        if (capture) output += chunk;
      });
    relay(child.stdout, process.stdout);
    relay(child.stderr, process.stderr);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

async function check(name, cmd, args) {
  process.stdout.write(`\n── ${name} ──\n`);
  const { code } = await run(cmd, args);
  if (code === 0) passed += 1;
  else {
    failed += 1;
    process.stdout.write(`✖ ${name} failed (exit ${code})\n`);
  }
}

/** Compiled test files under `dir`, skipping dependencies. */
function testFiles(dir) {
  const found = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (entry.endsWith('.test.js')) found.push(path);
  }
  return found.sort();
}

async function testSuite(name, files, { concurrency }) {
  process.stdout.write(`\n── ${name}: ${files.length} files ──\n`);
  if (files.length === 0) return;
  const { code, output } = await run(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${concurrency}`,
      '--test-reporter=spec',
      ...files.map((f) => relative(root, f)),
    ],
    { capture: true, env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' } },
  );
  // The spec reporter ends with "ℹ pass N" / "ℹ fail N" (cancelled tests count as failed).
  const count = (label) => Number(output.match(new RegExp(`^ℹ ${label} (\\d+)$`, 'm'))?.[1] ?? 0);
  const pass = count('pass');
  const fail = count('fail') + count('cancelled');
  passed += pass;
  failed += fail;
  if (code !== 0 && fail === 0) {
    failed += 1; // the runner itself failed (a file crashed before reporting)
    process.stdout.write(`✖ ${name}: test runner exited ${code}\n`);
  }
}

const packageDirs = ['libs', 'services'].flatMap((group) =>
  readdirSync(join(root, group)).map((name) => join(root, group, name, 'dist')),
);

await check('contracts: generated code is fresh', process.execPath, [
  'libs/contracts/generate.mjs',
  '--check',
]);
await check('type-check (tsc -b)', bin('tsc'), [
  '-b',
  ...packageDirs.map((d) => relative(root, dirname(d))),
  'test',
]);
// After the type-check: it imports the gateway's built OpenAPI document.
await check('client: generated OpenAPI types are fresh', process.execPath, [
  'libs/client/generate.mjs',
  '--check',
]);
// After the type-check too: it reads the services' built config schemas.
await check('config: docs/configuration.md matches the config schemas', process.execPath, [
  'libs/config/generate-docs.mjs',
  '--check',
]);
await check('lint (eslint, zero warnings)', bin('eslint'), [
  '--config',
  '.config/eslint.config.mjs',
  '--max-warnings',
  '0',
  '.',
]);
await check('format (prettier --check)', bin('prettier'), ['--check', '--log-level', 'warn', '.']);
await testSuite('unit tests', packageDirs.flatMap(testFiles), { concurrency: 2 });
await testSuite('integration tests', testFiles(join(root, 'test', 'dist', 'integration')), {
  concurrency: 1,
});
await testSuite('end-to-end tests', testFiles(join(root, 'test', 'dist', 'e2e')), { concurrency: 1 });

process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
