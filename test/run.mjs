#!/usr/bin/env node
// The test runner behind `npm test`, `npm run test:unit` and `npm run test:integration`.
//
//   node test/run.mjs                      every tier: checks, unit, integration, e2e
//   node test/run.mjs --tier unit          type-check of libs and services, then their unit tests
//   node test/run.mjs --tier integration   type-check of everything, integration tests, fault
//                                          injection and fuzzing (test/faults, test/fuzz), e2e
//   node test/run.mjs --tier integration gateway-auth llm-   only integration files whose name
//                                          contains one of these words (e2e runs only when named)
//   --concurrency N                        integration files run at once (default 2, or
//                                          TEST_CONCURRENCY); 1 runs them one at a time
//
// Ends with one line `N passed, N failed`, where a check (proto, tsc, lint…) counts as one test
// and each node:test test counts as itself. Skipped tests are neither: each is listed, with its
// reason, just above that line. Plain Node with no dependencies, so it runs before anything else
// could break.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { setTimeout, clearTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

// ── Integration files that cannot share the machine ────────────────────────────────────────────
// Every other integration file runs beside another one (each starts its own NATS, Redis, workers
// and gateways on free ports, and writes only under its own mkdtemp folders). These run alone,
// after the others, because what they assert depends on having the CPU or the memory to
// themselves. Keep the list short, and say why for each.
const serialFiles = {
  // Peak RSS of a whisper worker during long uploads: another file's processes on the same cores
  // slow ffmpeg and let buffers grow, so the memory budget would measure the neighbour.
  'whisper-memory': 'measures a worker’s peak memory',
  // Peak RSS of a spawned gateway under many large bodies, same reason.
  'gateway-body-memory': 'measures the gateway’s peak memory',
};

// Files that may run beside any other file but not beside each other (a shared resource).
const exclusiveGroups = {
  // `pnpm deploy` of the workspace into a temporary folder: two at once contend for the same
  // pnpm store and the same workspace lockfile.
  'pnpm-deploy': (name) => name.startsWith('bundle-'),
};

// ── Command line ───────────────────────────────────────────────────────────────────────────────
const argv = process.argv.slice(2);
let tier = 'all';
let concurrency = Number(process.env.TEST_CONCURRENCY) || 2;
const only = [];
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '--tier') tier = argv[++i];
  else if (arg.startsWith('--tier=')) tier = arg.slice('--tier='.length);
  else if (arg === '--concurrency') concurrency = Number(argv[++i]);
  else if (arg.startsWith('--concurrency=')) concurrency = Number(arg.slice('--concurrency='.length));
  else only.push(arg);
}
if (!['all', 'unit', 'integration'].includes(tier) || !(concurrency >= 1)) {
  process.stderr.write('usage: node test/run.mjs [--tier all|unit|integration] [--concurrency N] [name…]\n');
  process.exit(2);
}

// ── Results ────────────────────────────────────────────────────────────────────────────────────
let passed = 0;
let failed = 0;
/** `{ where, name, reason }` of every skipped test, listed before the closing line. */
const skips = [];
/** Where failures happened (a check's or a file's name), listed before the closing line. */
const failures = [];
const write = (text) => process.stdout.write(text);

/**
 * Runs a command from the repository root. Its output goes to the terminal as it comes
 * (`stream`), or is returned for the caller to print in one piece once it ends (for commands
 * that run beside others, so their lines do not interleave).
 */
function run(cmd, args, { stream = true, env = {}, timeoutMs } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    const timer =
      timeoutMs &&
      setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
    const relay = (from, to) =>
      from.on('data', (chunk) => {
        if (stream) to.write(chunk);
        output += chunk;
      });
    relay(child.stdout, process.stdout);
    relay(child.stderr, process.stderr);
    child.on('error', (error) => (output += `\n${cmd}: ${error.message}\n`));
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (timedOut) output += `\n✖ killed after ${timeoutMs / 1000} s\n`;
      resolve({ code: code ?? (signal ? 1 : 0), output, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const seconds = (s) => `${s.toFixed(1)} s`;

/** A check (exit status 0 or not) counts as one test. */
async function check(name, cmd, args, { stream = true } = {}) {
  if (stream) write(`\n── ${name} ──\n`);
  const result = await run(cmd, args, { stream });
  if (!stream) write(`\n── ${name} (${seconds(result.seconds)}) ──\n${result.output}`);
  if (result.code === 0) passed += 1;
  else {
    failed += 1;
    failures.push(name);
    write(`✖ ${name} failed (exit ${result.code})\n`);
  }
}

/**
 * Counts what node:test's spec reporter printed: its closing `ℹ pass N` / `ℹ fail N` /
 * `ℹ cancelled N` / `ℹ skipped N` lines (cancelled tests count as failed), and each skipped test.
 * A skipped test's line is `﹣ <name> (<duration>) # <reason>`, indented two spaces per level of
 * nesting under `▶ <parent>` lines; the reason is `SKIP` when the test gave none. That is so for
 * `test(name, { skip: reason })`, `test.skip(name)`, `t.skip(reason)` and `describe.skip`.
 */
function tally(where, code, output) {
  const count = (label) => {
    let sum = 0;
    for (const m of output.matchAll(new RegExp(`^ℹ ${label} (\\d+)$`, 'gm'))) sum += Number(m[1]);
    return sum;
  };
  const pass = count('pass');
  const fail = count('fail') + count('cancelled');
  const skipped = count('skipped');
  passed += pass;
  failed += fail;
  const parents = [];
  const listed = [];
  for (const line of output.split('\n')) {
    const header = /^(\s*)▶ (.*)$/.exec(line);
    if (header) {
      parents.length = header[1].length / 2;
      parents.push(header[2]);
      continue;
    }
    const skip = /^(\s*)﹣ (.*?)(?: \([\d.]+m?s\))?(?: # (.*))?$/.exec(line);
    if (!skip) continue;
    const depth = skip[1].length / 2;
    const name = [...parents.slice(0, depth), skip[2]].join(' › ');
    const reason = skip[3] === undefined || skip[3] === 'SKIP' ? 'no reason given' : skip[3];
    listed.push({ where, name, reason });
  }
  skips.push(...listed);
  // A skip the spec lines did not show (e.g. output cut short) is still counted.
  for (let i = listed.length; i < skipped; i++) skips.push({ where, name: '(unnamed)', reason: 'see above' });
  if (fail > 0) failures.push(where);
  if (code !== 0 && fail === 0) {
    failed += 1; // the runner itself failed (a file crashed before reporting, or was killed)
    failures.push(where);
    write(`✖ ${where}: test runner exited ${code}\n`);
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

const testEnv = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };

/** Many files under one node --test (the unit tests: quick, no brokers). */
async function testSuite(name, files, { concurrency: n, stream = true }) {
  const header = `\n── ${name}: ${files.length} files ──\n`;
  if (stream || files.length === 0) write(header);
  if (files.length === 0) return;
  const {
    code,
    output,
    seconds: took,
  } = await run(
    process.execPath,
    ['--test', `--test-concurrency=${n}`, '--test-reporter=spec', ...files.map((f) => relative(root, f))],
    { stream, env: testEnv },
  );
  if (!stream) write(header + output);
  write(`── ${name}: ${seconds(took)} ──\n`);
  tally(name, code, output);
}

// Seconds each integration file took last time, so the longest start first (an ignored file).
const durationsFile = join(root, 'test', 'dist', '.durations.json');
function readDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, 'utf8'));
  } catch {
    return {};
  }
}

/** A file's short name: `gateway-auth` for test/dist/integration/gateway-auth.test.js. */
const shortName = (file) => basename(file, '.test.js');
const label = (file) => `${basename(dirname(file))}/${shortName(file)}`;

/**
 * Runs each file under its own `node --test`, up to `n` at a time, longest first (by last run's
 * durations); files of one exclusive group never overlap. Each file's output is printed in one
 * piece when it ends, headed by its name and duration.
 */
async function runFiles(files, n, durations) {
  const queue = [...files].sort((a, b) => (durations[label(b)] ?? 60) - (durations[label(a)] ?? 60));
  const groupOf = (file) =>
    Object.keys(exclusiveGroups).find((group) => exclusiveGroups[group](shortName(file)));
  const busyGroups = new Set();
  let running = 0;
  await new Promise((resolveAll) => {
    const next = () => {
      if (queue.length === 0 && running === 0) return resolveAll();
      while (running < n) {
        const index = queue.findIndex((f) => !busyGroups.has(groupOf(f)));
        if (index < 0) return;
        const [file] = queue.splice(index, 1);
        const group = groupOf(file);
        if (group) busyGroups.add(group);
        running += 1;
        void run(process.execPath, ['--test', '--test-reporter=spec', relative(root, file)], {
          stream: false,
          env: testEnv,
          timeoutMs: 15 * 60_000,
        }).then(({ code, output, seconds: took }) => {
          write(`\n── ${label(file)} (${seconds(took)}) ──\n${output}`);
          durations[label(file)] = Math.round(took * 10) / 10;
          tally(label(file), code, output);
          if (group) busyGroups.delete(group);
          running -= 1;
          next();
        });
      }
    };
    next();
  });
}

async function integrationTiers() {
  const wanted = (file) => only.length === 0 || only.some((word) => shortName(file).includes(word));
  const integration = testFiles(join(root, 'test', 'dist', 'integration')).filter(wanted);
  const e2e = testFiles(join(root, 'test', 'dist', 'e2e')).filter((f) => only.length === 0 || wanted(f));
  const serial = integration.filter((f) => shortName(f) in serialFiles);
  const parallel = integration.filter((f) => !(shortName(f) in serialFiles));
  const durations = readDurations();
  const started = Date.now();
  write(`\n── integration tests: ${parallel.length} files, ${concurrency} at a time ──\n`);
  await runFiles(parallel, concurrency, durations);
  if (serial.length > 0) {
    write(`\n── integration tests that run alone: ${serial.length} files ──\n`);
    for (const file of serial) write(`   ${shortName(file)}: ${serialFiles[shortName(file)]}\n`);
    await runFiles(serial, 1, durations);
  }
  // Faults and fuzzing drive whole stacks under load and time their recovery: beside each other
  // at most, after the rest, so a neighbour's start-up is not taken for a slow recovery.
  const reliability = ['faults', 'fuzz']
    .flatMap((group) => testFiles(join(root, 'test', 'dist', group)))
    .filter(wanted);
  if (reliability.length > 0) {
    write(`\n── fault injection and fuzzing: ${reliability.length} files, 2 at a time ──\n`);
    await runFiles(reliability, Math.min(2, concurrency), durations);
  }
  write(`\n── end-to-end tests: ${e2e.length} files, one at a time ──\n`);
  await runFiles(e2e, 1, durations);
  write(`\n── integration and end-to-end tests: ${seconds((Date.now() - started) / 1000)} ──\n`);
  try {
    writeFileSync(durationsFile, `${JSON.stringify(durations, null, 2)}\n`);
  } catch {
    // only an ordering hint
  }
}

// ── Tiers ──────────────────────────────────────────────────────────────────────────────────────
const packages = ['libs', 'services'].flatMap((group) =>
  readdirSync(join(root, group)).map((name) => `${group}/${name}`),
);
const unitFiles = () => packages.flatMap((p) => testFiles(join(root, p, 'dist')));
const lint = ['--config', '.config/eslint.config.mjs', '--max-warnings', '0', '.'];
const started = Date.now();

if (tier === 'unit') {
  await check('type-check (tsc -b libs/* services/*)', bin('tsc'), ['-b', ...packages]);
  await testSuite('unit tests', unitFiles(), { concurrency: 2 });
} else if (tier === 'integration') {
  await check('type-check (tsc -b)', bin('tsc'), ['-b', ...packages, 'test']);
  await integrationTiers();
} else {
  await check('contracts: generated code is fresh', process.execPath, [
    'libs/contracts/generate.mjs',
    '--check',
  ]);
  await check('type-check (tsc -b)', bin('tsc'), ['-b', ...packages, 'test']);
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
  // Lint and prettier read files only, so they run beside the unit tests (whose own waits leave
  // the CPU idle at times); their output is printed once each ends.
  await Promise.all([
    (async () => {
      await check('lint (eslint, zero warnings)', bin('eslint'), lint, { stream: false });
      await check('format (prettier --check)', bin('prettier'), ['--check', '--log-level', 'warn', '.'], {
        stream: false,
      });
    })(),
    testSuite('unit tests', unitFiles(), { concurrency: 2, stream: false }),
  ]);
  await integrationTiers();
}

write(
  `\n── ${tier === 'all' ? 'everything' : `${tier} tier`}: ${seconds((Date.now() - started) / 1000)} ──\n`,
);
if (failures.length > 0) write(`failed in: ${[...new Set(failures)].join(', ')}\n`);
if (skips.length > 0) {
  write(`${skips.length} skipped:\n`);
  for (const s of skips) write(`  ﹣ ${s.where}: ${s.name} (${s.reason})\n`);
}
write(`${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
