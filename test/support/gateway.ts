import type { ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@switchboard/devcluster';
import {
  gatewayEnvVars,
  loadGatewayConfig,
  startGateway as startInProcess,
} from '@switchboard/gateway/in-process';
import { createLogger } from '@switchboard/telemetry';
import { retryOnPortClash } from './port-clash.js';
import { spawnNode } from './processes.js';
import { withUsageDatabase } from './usage-database.js';

// Compiled to test/dist/support/, three levels below the repository root.
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A running gateway, inside the test process (startGateway) or as its own (spawnGateway). */
export interface GatewayProcess {
  url: string;
  port: number;
  metricsUrl: string;
  adminToken: string;
  /** Its recent log lines (stdout and stderr for a spawned one). */
  output(): string;
  stop(): Promise<void>;
}

/** A gateway in a process of its own, for what only a process shows: exit codes, signals, memory. */
export interface SpawnedGateway extends GatewayProcess {
  child: ChildProcess;
}

export const testAdminToken = 'test-admin-token-0123456789abcdef';

/**
 * The CLUSTER_SECRET every gateway and spawned worker gets (gateway → worker calls carry it; a
 * worker refuses calls without it). A test that calls a worker directly passes it to createClient.
 */
export const testClusterSecret = 'test-cluster-secret-0123456789abcdef';

/** The KEY_PEPPER every test gateway gets, so gateways of one stack accept each other's keys. */
export const testKeyPepper = 'test-key-pepper-0123456789abcdef-0123456789';

/**
 * The WEBHOOK_SECRETS_KEY every test gateway gets (webhooks on, as in every deployment), so a
 * webhook sender started beside it opens the secrets the gateway sealed. `''` in a test's env turns webhooks off.
 */
export const testWebhookSecretsKey = 'test-webhook-secrets-key-0123456789abcdef';

/** Log lines kept for output(): enough for the end of a failed start-up, never unbounded. */
const OUTPUT_LIMIT = 20_000;

/** The environment a test gateway runs with: `env` over these defaults. */
function gatewayEnv(env: Record<string, string>): Record<string, string> {
  return {
    ADMIN_TOKEN: testAdminToken,
    CLUSTER_SECRET: testClusterSecret,
    KEY_PEPPER: testKeyPepper,
    WEBHOOK_SECRETS_KEY: testWebhookSecretsKey,
    LOG_LEVEL: 'warn',
    // Workers that are not running: nothing listens on these ports. They are unassigned ports
    // below 1024, never handed out by freePort() (20000 and up), so no process of
    // this or another test file running beside it can start listening there meanwhile.
    LLM_ADDR: '127.0.0.1:4',
    WHISPER_ADDR: '127.0.0.1:6',
    DIFFUSION_ADDR: '127.0.0.1:8',
    ANIMATION_ADDR: '127.0.0.1:10',
    BROWSER_ADDR: '127.0.0.1:12',
    ...env,
  };
}

/**
 * Starts the real gateway inside the test process, from the environment it would have been
 * given as a process (read by its own config loader), on free ports; resolves once /readyz
 * answers 200. No build of main.js and no child process: what routes do is tested this way.
 * Variables the gateway does not read are refused, since no process would see them here.
 */
export async function startGateway(given: Record<string, string>): Promise<GatewayProcess> {
  const env = await withUsageDatabase(given);
  // `<NAME>_FILE` gives NAME's value as a file (libs/config's loadConfig reads it).
  const unknown = Object.keys(env).filter((name) => !gatewayEnvVars.includes(name.replace(/_FILE$/, '')));
  if (unknown.length > 0) {
    throw new Error(`the gateway reads no ${unknown.join(', ')}; use spawnGateway for process settings`);
  }
  const config = loadGatewayConfig({ ...gatewayEnv(env), GATEWAY_PORT: '0', METRICS_PORT: '0' });
  let output = '';
  const logger = createLogger({
    service: 'gateway',
    level: config.logLevel,
    destination: { write: (line: string) => (output = (output + line).slice(-OUTPUT_LIMIT)) },
  });
  const gateway = await startInProcess(config, logger);
  const url = `http://127.0.0.1:${gateway.port}`;
  try {
    await waitReady(
      url,
      () => output,
      () => undefined,
    );
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return {
    url,
    port: gateway.port,
    metricsUrl: `http://127.0.0.1:${gateway.metricsPort}/metrics`,
    adminToken: testAdminToken,
    output: () => output,
    stop: () => gateway.close(),
  };
}

/**
 * Starts the built gateway (`services/gateway/dist/main.js`) as its own process, as the local
 * cluster runs it, and waits for /readyz. For tests of start-up, signals and the process's memory.
 */
export async function spawnGateway(env: Record<string, string>): Promise<SpawnedGateway> {
  const withDatabase = await withUsageDatabase(env);
  return retryOnPortClash(() => spawnGatewayOnce(withDatabase));
}

async function spawnGatewayOnce(env: Record<string, string>): Promise<SpawnedGateway> {
  // A port the caller gives (a gateway restarted where its clients know it) is kept.
  const port = Number(env.GATEWAY_PORT) || (await freePort());
  const metricsPort = Number(env.METRICS_PORT) || (await freePort());
  const proc = spawnNode('gateway', join(repoRoot, 'services/gateway/dist/main.js'), {
    env: {
      PATH: process.env.PATH ?? '',
      GATEWAY_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      ...gatewayEnv(env),
    },
  });
  const { child, output } = proc;
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, output, () => {
    if (child.exitCode !== null) throw new Error(`gateway exited during start-up:\n${output()}`);
  }).catch(async (error: unknown) => {
    await proc.stop(0);
    throw error;
  });
  return {
    url,
    port,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    adminToken: testAdminToken,
    child,
    output,
    stop: () => proc.stop(5000),
  };
}

/** Polls /readyz until 200; `check` throws when waiting is pointless (the process died). */
async function waitReady(url: string, output: () => string, check: () => void): Promise<void> {
  // Generous: other test files may share the cores.
  const deadline = Date.now() + 60_000;
  for (;;) {
    check();
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`gateway not ready in time:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
