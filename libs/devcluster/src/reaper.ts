import type { ChildProcess } from 'node:child_process';

/**
 * Makes sure servers we spawned never outlive this process. Three layers:
 * - on Linux each child is started under `setpriv --pdeathsig SIGKILL` (see process.ts), so the
 *   kernel kills it even if we die by SIGKILL or crash;
 * - on a normal exit we SIGKILL every child still running ('exit' handlers must be synchronous);
 * - on SIGINT/SIGTERM/SIGHUP, when nobody else handles that signal, we do the same and re-raise
 *   it so the process still dies the way it would have without us.
 */
const live = new Set<ChildProcess>();
let installed = false;

function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  // Someone else listens (a runner with its own graceful shutdown): let it stop things in order;
  // when it exits, the 'exit' handler still sweeps up.
  if (process.listenerCount(signal) > 1) return;
  killAll();
  uninstallSignals();
  // Alone, we restore the default: die by the same signal.
  process.kill(process.pid, signal);
}

const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function uninstallSignals(): void {
  for (const signal of signals) process.removeListener(signal, onSignal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.once('exit', killAll);
  for (const signal of signals) process.on(signal, onSignal);
}

export function track(child: ChildProcess): void {
  install();
  live.add(child);
  child.once('exit', () => live.delete(child));
}
