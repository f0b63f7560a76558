#!/usr/bin/env node
// `npm start`: the whole local cluster in the foreground, until Ctrl-C / SIGTERM.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, workerNames, type Cluster } from './cluster.js';
import { lineFormatter } from './log-lines.js';
import { MAX_REPLICAS, REPLICA_DOMAIN } from './replicas.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const say = (line: string) => process.stdout.write(`${line}\n`);

const usage = `Usage: npm start  (node libs/devcluster/dist/main.js)

Runs NATS, Redis, PostgreSQL, every built worker (the webhook sender among them) and the gateway
as local processes until Ctrl-C. A process that exits on its own is started again as Kubernetes
would: after 10 s, doubling up to 5 min, back to 10 s once it has run 10 min.
Every setting of the services passes through from the environment; the runner's own:
  GATEWAY_PORT=8080            the gateway's port
  GATEWAY_HOST=127.0.0.1       the gateway's listen address (loopback only unless set)
  SWITCHBOARD_STATE_DIR=.run   keys, credentials, development models and stored files
  SWITCHBOARD_REPLICAS=llm=3,diffusion=2,whisper=2,browser=2,webhooks=2
                               processes per worker (1 to ${MAX_REPLICAS}; unnamed workers get 1), each on its
                               own loopback address (127.0.0.2, …) and the same port, behind one
                               name (llm.${REPLICA_DOMAIN}) that the gateway resolves through the
                               runner's DNS server (WORKER_DNS_SERVER). Unset: one process each on
                               127.0.0.1, no DNS.
  SWITCHBOARD_WORKERS=llm,whisper
                               only these workers (default: every one that is built)
  SWITCHBOARD_FAKE_AVATAR=1    the avatar back-end against a local fake of the D-ID Talks API
  WEBHOOK_ALLOWED_HOSTS=127.0.0.1:9000
                               webhook targets exempt from the address guard (and allowed plain
                               http://), e.g. a receiver on this machine; passed to the gateway and
                               the sender like every other setting
  SWITCHBOARD_PROMETHEUS=1     also a Prometheus of its own (Debian's prometheus package) on a free
                               loopback port, scraping every process every 2 s with the chart's
                               alert rules loaded (npm run observe)
`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(usage);
    return;
  }
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

  const workers = chosenWorkers(process.env.SWITCHBOARD_WORKERS);
  const formatLine = lineFormatter(process.stdout.isTTY === true);
  say('[switchboard] starting NATS, Redis, the workers and the gateway…');
  const cluster = await startCluster({
    root,
    env: process.env,
    workers,
    onLine: (service, line) => say(formatLine(service, line)),
    // A process that exits on its own is restarted with a back-off, and the notices say so.
    onNotice: (message) => say(`[switchboard] ${message}`),
  });
  running.cluster = cluster;
  if (shuttingDown) {
    await cluster.stop();
    return;
  }
  const started = cluster.workers.length ? cluster.workers.join(', ') : 'none built yet';
  say('');
  say(`[switchboard] ready: ${cluster.gatewayUrl}`);
  if (cluster.prometheusUrl !== undefined) say(`[switchboard] prometheus: ${cluster.prometheusUrl}`);
  say(`[switchboard] workers: ${started}`);
  if (cluster.dnsServer !== undefined) {
    for (const worker of cluster.workers) {
      const replicas = cluster.replicas(worker);
      const address = cluster.workerAddresses[`${worker.toUpperCase()}_ADDR`] ?? 'no address (not called)';
      say(
        `[switchboard]   ${worker} ×${replicas.length} at ${address} → ${replicas.map((r) => r.host).join(', ')}`,
      );
    }
    say(`[switchboard] worker names resolve through the runner's DNS server at ${cluster.dnsServer}`);
  }
  say(`[switchboard] admin token: ${cluster.adminToken}`);
  say(`[switchboard] dashboard: ${cluster.gatewayUrl}/admin   API docs: ${cluster.gatewayUrl}/docs`);
  say('[switchboard] Ctrl-C stops everything.');
}

/** SWITCHBOARD_WORKERS as a list; a name that is no worker stops the runner before it starts anything. */
function chosenWorkers(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const names = value.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(workerNames as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `SWITCHBOARD_WORKERS="${value}": ${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length > 1 ? 'are not workers' : 'is not a worker'} (${workerNames.join(', ')})`,
    );
  }
  return names;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[switchboard] failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
