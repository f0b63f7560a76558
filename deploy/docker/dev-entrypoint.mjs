#!/usr/bin/env node
// The development image's command (deploy/docker/Dockerfile, target dev): the TypeScript compiler
// watching the service's project (and the libraries it references) beside `node --watch` of the
// service's dist/main.js. A synced source file is recompiled into dist, and node restarts the
// service when a file it loaded changes: no image build per edit. SIGTERM or SIGINT (tini forwards
// the pod's) stops both, the service first given the time to drain as in production; if either
// exits on its own, the other is stopped and this exits with its code, so the pod restarts.
// Plain Node, no dependencies. SERVICE names the folder of services/.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const workspace = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const service = process.env.SERVICE ?? '';
const serviceDir = join(workspace, 'services', service);
if (!service || !existsSync(join(serviceDir, 'tsconfig.json'))) {
  process.stderr.write(`SERVICE must name a folder of ${join(workspace, 'services')} (got "${service}")\n`);
  process.exit(2);
}

const tsc = join(workspace, 'node_modules', 'typescript', 'bin', 'tsc');
const children = [
  spawn(process.execPath, [tsc, '-b', '--watch', '--preserveWatchOutput', join('services', service)], {
    cwd: workspace,
    stdio: 'inherit',
  }),
  // From the service's folder, as the production image runs dist/main.js from its app folder.
  spawn(process.execPath, ['--watch', 'dist/main.js'], { cwd: serviceDir, stdio: 'inherit' }),
];

let stopping = false;
let exitCode = 0;
const running = new Set(children);

function stopAll(signal) {
  stopping = true;
  for (const child of running) child.kill(signal);
}

for (const child of children) {
  child.on('exit', (code, signal) => {
    running.delete(child);
    if (!stopping) {
      // One of them ended by itself: the loop is broken, so end the other and report it.
      exitCode = code ?? 1;
      process.stderr.write(`${child.spawnargs.slice(1).join(' ')} exited (${code ?? signal})\n`);
      stopAll('SIGTERM');
    }
    if (running.size === 0) process.exit(exitCode);
  });
}

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => stopAll(signal));
