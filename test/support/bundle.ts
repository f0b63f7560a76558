// What the bundle tests share: a service's Dockerfile read as instructions, the production install
// step (`pnpm … deploy /out`) taken from it and run into a temp folder with the workspace's own
// pnpm, and the check that the deployed folder is self-contained.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { repoRoot } from './helm.js';

/** services/<service>/<file>: the Dockerfile of one service (`Dockerfile.gpu` for a variant). */
export function serviceDockerfile(service: string, file = 'Dockerfile'): string {
  return join(repoRoot, 'services', service, file);
}

/** The Dockerfile with continuation lines joined and comment lines dropped. */
export function dockerInstructions(dockerfilePath: string): string[] {
  const lines = readFileSync(dockerfilePath, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));
  return lines
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

/** The arguments of the Dockerfile's `pnpm … deploy /out`, minus the image-only store folder. */
export function dockerDeployArgs(dockerfilePath: string): string[] {
  const run = dockerInstructions(dockerfilePath).find(
    (line) => line.startsWith('RUN') && / deploy \/out\b/.test(line),
  );
  assert.ok(run, `${relative(repoRoot, dockerfilePath)} runs \`pnpm … deploy /out\``);
  const command = run
    .split('&&')
    .find((part) => / deploy \/out\b/.test(part))!
    .trim();
  const words = command.split(' ');
  assert.equal(words[0], 'pnpm');
  const args: string[] = [];
  for (let i = 1; i < words.length; i++) {
    if (words[i] === '--store-dir')
      i++; // the image's cache mount; here the workspace's own store
    else args.push(words[i]!);
  }
  assert.equal(args.at(-1), '/out');
  return args.slice(0, -1);
}

/** The workspace's pinned pnpm (the test package's devDependency), run with this node. */
export function pnpmCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('pnpm')), 'bin', 'pnpm.cjs');
}

/**
 * Runs the Dockerfile's deploy (`pnpm <args> <out>`) from the repository root, as the image's build
 * stage does (CI=true, ONNXRUNTIME_NODE_INSTALL=skip unless `env` says otherwise), and asserts it
 * succeeded. Returns the arguments it ran with.
 */
export function runDockerDeploy(
  dockerfilePath: string,
  out: string,
  env: Record<string, string> = {},
): string[] {
  const args = [...dockerDeployArgs(dockerfilePath), out];
  assert.ok(args.includes('--prod'));
  const result = spawnSync(process.execPath, [pnpmCli(), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', ONNXRUNTIME_NODE_INSTALL: 'skip', ...env },
    timeout: 180_000,
  });
  assert.equal(result.status, 0, `pnpm ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return args;
}

/** Every symlink under `dir` must point inside it: the folder is copied into the image alone. */
export function linksLeavingFolder(dir: string): string[] {
  const root = realpathSync(dir);
  const bad: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path)) {
      const full = join(path, entry);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(full);
        } catch {
          bad.push(`${relative(root, full)} (dangling)`);
          continue;
        }
        if (target !== root && !target.startsWith(root + sep))
          bad.push(`${relative(root, full)} -> ${target}`);
      } else if (stat.isDirectory()) walk(full);
    }
  };
  walk(root);
  return bad;
}

export interface BundledProcess {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
}

/**
 * Starts `node dist/main.js` from a deployed folder as the image runs it: that folder as the
 * working directory and a bare environment (no HOME, production mode) plus `env`. The process is
 * killed when the test ends.
 */
export function startBundled(
  out: string,
  env: Record<string, string>,
  t: { after(fn: () => void): void },
): BundledProcess {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: out,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: join(out, '..', 'home-that-does-not-exist'),
      NODE_ENV: 'production',
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, output: () => output };
}

/**
 * What a deployed folder must hold to run as an image: the service's build, the listed workspace
 * libraries and packages, none of the development-only ones, and no link leaving the folder.
 */
export function assertDeployedContents(
  out: string,
  expected: { libs: readonly string[]; shipped?: readonly string[]; notShipped: readonly string[] },
): void {
  assert.ok(existsSync(join(out, 'dist', 'main.js')));
  for (const lib of expected.libs) {
    assert.ok(
      existsSync(join(out, 'node_modules', '@switchboard', lib, 'dist')),
      `@switchboard/${lib} is copied in`,
    );
  }
  for (const dep of expected.shipped ?? []) {
    assert.ok(existsSync(join(out, 'node_modules', dep, 'package.json')), `${dep} is shipped`);
  }
  for (const dev of expected.notShipped) {
    assert.ok(!existsSync(join(out, 'node_modules', dev)), `${dev} is not shipped`);
  }
  assert.deepEqual(linksLeavingFolder(out), [], 'no link points outside the deployed folder');
}
