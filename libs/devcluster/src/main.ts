#!/usr/bin/env node
// `npm start`: the whole local cluster in the foreground, until Ctrl-C / SIGTERM.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type Cluster } from './cluster.js';
import { lineFormatter } from './log-lines.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  // The managed processes are unref'd (so tests can never hang on them); the runner itself must
  // stay up until it is told to stop.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let shuttingDown = false;
  // Set once started; a Ctrl-C during start-up finds it unset and exits (the reaper kills children).
  const running: { cluster?: Cluster } = {};
  const shutdown = (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say('[switchboard] stopping every process…');
    void (running.cluster?.stop() ?? Promise.resolve()).finally(() => {
      clearInterval(keepAlive);
      say('[switchboard] stopped');
      process.exit(code);
    });
  };
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));

  const formatLine = lineFormatter(process.stdout.isTTY === true);
  say('[switchboard] starting NATS, Redis, the workers and the gateway…');
  const cluster = await startCluster({
    root,
    env: process.env,
    onLine: (service, line) => say(formatLine(service, line)),
    onNotice: (message) => say(`[switchboard] ${message}`),
    onCrash: (service) => {
      say(`[switchboard] ${service} exited unexpectedly`);
      shutdown(1);
    },
  });
  running.cluster = cluster;
  if (shuttingDown) {
    await cluster.stop();
    return;
  }
  const workers = cluster.workers.length ? cluster.workers.join(', ') : 'none built yet';
  say('');
  say(`[switchboard] ready: ${cluster.gatewayUrl}`);
  say(`[switchboard] workers: ${workers}`);
  say(`[switchboard] admin token: ${cluster.adminToken}`);
  say(`[switchboard] dashboard: ${cluster.gatewayUrl}/admin   API docs: ${cluster.gatewayUrl}/docs`);
  say('[switchboard] Ctrl-C stops everything.');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[switchboard] failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
