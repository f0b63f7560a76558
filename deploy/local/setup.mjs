#!/usr/bin/env node
// Idempotent set-up shared by `npm start` and `npm test`: Debian packages, pnpm, the workspace
// install and the TypeScript build. Plain Node with no dependencies, because it runs before any
// package is installed. Nothing here downloads from outside the npm registry and Debian.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// Executable the cluster needs → the Debian package that provides it.
const debianPackages = [
  { bin: 'nats-server', pkg: 'nats-server' },
  { bin: 'redis-server', pkg: 'redis-server' },
  // The browser worker drives Debian's Chromium; a downloaded browser build is never used.
  { bin: 'chromium', pkg: 'chromium' },
  // The whisper worker decodes every upload with ffmpeg.
  { bin: 'ffmpeg', pkg: 'ffmpeg' },
  // Tests make their speech fixtures with espeak-ng, so no recording is committed.
  { bin: 'espeak-ng', pkg: 'espeak-ng' },
  // `npm run observe` and the Prometheus test run their own Prometheus (never the system one).
  { bin: 'prometheus', pkg: 'prometheus' },
  // The gateways' usage store; tests and `npm start` run their own server (never the system one).
  { bin: 'postgres', pkg: 'postgresql', dirs: postgresBinDirs },
];

/** Debian keeps PostgreSQL's server binaries off PATH, in /usr/lib/postgresql/<version>/bin. */
function postgresBinDirs() {
  const base = '/usr/lib/postgresql';
  return existsSync(base) ? readdirSync(base).map((version) => join(base, version, 'bin')) : [];
}

function log(message) {
  process.stdout.write(`[setup] ${message}\n`);
}

function onPath(bin, extraDirs = []) {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin'], extraDirs);
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, bin))) return true;
  }
  return false;
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  }
}

function ensureDebianPackages() {
  const missing = debianPackages.filter(({ bin, dirs }) => !onPath(bin, dirs?.())).map(({ pkg }) => pkg);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing Debian packages: ${missing.join(' ')} (run as root, or: sudo apt-get install ${missing.join(' ')})`,
    );
  }
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { env });
}

// Chromium's managed policy for the browser worker (services/browser/policy/switchboard.json):
// Debian's Chromium reads /etc/chromium/policies/managed, and the worker refuses to start unless
// the policy is in force there. Installed as root; otherwise the worker's start-up names the fix.
function ensureChromiumPolicy() {
  const source = join(root, 'services/browser/policy/switchboard.json');
  const target = '/etc/chromium/policies/managed/switchboard.json';
  const wanted = readFileSync(source, 'utf8');
  if (existsSync(target) && readFileSync(target, 'utf8') === wanted) return;
  if (process.getuid?.() !== 0) {
    log(`Chromium policy not installed; the browser worker needs it (as root: cp ${source} ${target})`);
    return;
  }
  log(`installing the browser worker's Chromium policy as ${target}`);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, wanted, { mode: 0o644 });
}

// The user the browser worker starts Chromium as when it runs as root (BROWSER_CHROMIUM_USER's
// default): Chromium refuses its sandbox as root. A system account with no home, no shell and no
// files of its own. A worker that is not root runs Chromium as itself and needs none.
function ensureChromiumUser() {
  const name = 'switchboard-chromium';
  if (
    readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .some((line) => line.startsWith(`${name}:`))
  )
    return;
  if (process.getuid?.() !== 0) return;
  log(`creating the user ${name}, whom the browser worker runs Chromium as when it runs as root`);
  run('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    name,
  ]);
}

// pnpm comes from the npm registry through corepack when it works, else through npx.
function pnpmCommand() {
  const version = JSON.parse(
    execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").packageManager)'], {
      cwd: root,
      encoding: 'utf8',
    }),
  );
  const env = { ...process.env, COREPACK_ENABLE_DOWNLOAD_PROMPT: '0', COREPACK_ENABLE_STRICT: '0' };
  const probe = spawnSync('corepack', [version.split('@')[0], '--version'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (probe.status === 0) return { cmd: 'corepack', args: ['pnpm'], env };
  log('corepack unavailable, using npx');
  return { cmd: 'npx', args: ['--yes', version], env };
}

function main() {
  ensureDebianPackages();
  ensureChromiumPolicy();
  ensureChromiumUser();
  const pnpm = pnpmCommand();
  const env = { ...pnpm.env, ONNXRUNTIME_NODE_INSTALL: 'skip' };
  log('installing the workspace');
  run(pnpm.cmd, [...pnpm.args, 'install', '--frozen-lockfile', '--reporter=append-only'], { env });
  // `npm test` builds as its own counted check, so a type error is reported, not fatal here.
  if (process.argv.includes('--no-build')) return;
  log('building');
  run(pnpm.cmd, [...pnpm.args, 'run', '--silent', 'build'], { env });
}

try {
  main();
} catch (error) {
  process.stderr.write(`[setup] failed: ${error.message}\n`);
  process.exit(1);
}
