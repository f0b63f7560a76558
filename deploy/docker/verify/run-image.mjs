// Starts a built image's process as its entrypoint would (tini as PID 1, then the image's command)
// in a buildah working container run by runc: the image's own root filesystem, user (10001),
// working directory and ENV, its own PID namespace, plus the variables and read-only volumes the
// chart would give it, on this machine's network. Then waits until it is ready, and stops and
// removes it. runc rather than buildah's chroot isolation: Chromium's sandbox creates user
// namespaces, which the kernel refuses to a chrooted process, and tini is PID 1 only in a PID
// namespace of its own. (crun, the default OCI runtime, fails on these machines' cgroups.)
import { spawn } from 'node:child_process';
import { clearTimeout, setTimeout } from 'node:timers';
import { buildahArgs, buildahCapture, log } from './host.mjs';

/** How long a process gets to become ready (start-up on a shared 2-core machine included). */
const READY_TIMEOUT_MS = 120_000;

/**
 * Runs `command` (the image's entrypoint and command) in a fresh container of `image`, and resolves
 * once `ready()` resolves true; fails with the process's output if it exits or times out first.
 */
export async function runUntilReady(image, { command, env = {}, volumes = [], ready }) {
  const container = buildahCapture(['from', '--pull=never', image]);
  const args = buildahArgs([
    'run',
    '--isolation=oci',
    '--runtime=runc',
    '--network=host',
    ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ...volumes.flatMap((volume) => ['--volume', volume]),
    container,
    '--',
    ...command,
  ]);
  // Its own process group, so the container's processes can be stopped together.
  const child = spawn('buildah', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-child.pid, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    buildahCapture(['rm', container]);
  };

  try {
    const started = Date.now();
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${image} exited (${await exited}) before it was ready:\n${output}`);
      }
      if (Date.now() - started > READY_TIMEOUT_MS) {
        throw new Error(`${image} was not ready in ${READY_TIMEOUT_MS / 1000} s:\n${output}`);
      }
      if (await ready().catch(() => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    log(`${image}: ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await stop();
  }
}
