// What images:verify needs from this machine: its Debian packages, where its state lives (ignored by
// git and by the build context), and buildah run against that state's own storage, so nothing it
// builds mixes with the machine's other containers.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** Under .tools/: ignored by git and by the images' build context (Dockerfile.dockerignore). */
export const stateDir = join(repoRoot, '.tools', 'images-verify');
const storage = join(stateDir, 'storage');
const runroot = join(stateDir, 'run');

export function log(message) {
  process.stdout.write(`[images:verify] ${message}\n`);
}

/** Runs a command with its output shown; throws unless it exits 0. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: repoRoot, ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  }
}

/** Runs a command and returns its standard output; throws with its error output unless it exits 0. */
export function capture(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: repoRoot, ...options });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status ?? result.signal}:\n${result.stderr}`,
    );
  }
  return result.stdout.trim();
}

/** buildah's global options: this script's own image storage. */
export function buildahArgs(args) {
  mkdirSync(storage, { recursive: true });
  mkdirSync(runroot, { recursive: true });
  return ['--root', storage, '--runroot', runroot, ...args];
}

export function buildah(args, options = {}) {
  run('buildah', buildahArgs(args), options);
}

export function buildahCapture(args) {
  return capture('buildah', buildahArgs(args));
}

function onPath(bin) {
  return ['/usr/local/bin', '/usr/bin', '/usr/sbin', '/bin', '/sbin'].some((dir) =>
    existsSync(join(dir, bin)),
  );
}

/**
 * buildah builds the images and runc runs them, mmdebstrap makes the Debian root filesystem of
 * the Node stand-in, and nats-server and redis-server serve the gateway and the browser worker.
 * Installed from Debian when missing (as root, which building and running images needs anyway).
 */
export function ensureHostTools() {
  if (process.getuid?.() !== 0) throw new Error('images:verify runs as root (buildah, mmdebstrap, chroot)');
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `images:verify builds linux/amd64 images on a linux/amd64 machine (this is ${process.platform}/${process.arch})`,
    );
  }
  const wanted = [
    { bin: 'buildah', pkg: 'buildah' },
    { bin: 'mmdebstrap', pkg: 'mmdebstrap' },
    { bin: 'newuidmap', pkg: 'uidmap' },
    { bin: 'runc', pkg: 'runc' },
    { bin: 'nats-server', pkg: 'nats-server' },
    { bin: 'redis-server', pkg: 'redis-server' },
  ];
  const missing = wanted.filter(({ bin }) => !onPath(bin)).map(({ pkg }) => pkg);
  if (missing.length === 0) return;
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { env });
}
