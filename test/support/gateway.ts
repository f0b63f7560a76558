import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@switchboard/devcluster';
import { retryOnPortClash } from './port-clash.js';

// Compiled to test/dist/support/, three levels below the repository root.
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface GatewayProcess {
  url: string;
  port: number;
  metricsUrl: string;
  adminToken: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export const testAdminToken = 'test-admin-token-0123456789abcdef';

/**
 * The CLUSTER_SECRET every spawned gateway and worker gets (gateway → worker calls carry it; a
 * worker refuses calls without it). A test that calls a worker directly passes it to createClient.
 */
export const testClusterSecret = 'test-cluster-secret-0123456789abcdef';

/**
 * Starts the real gateway (`services/gateway/dist/main.js`) as its own process on free ports,
 * as the local cluster runs it, and waits for /readyz.
 */
export function startGateway(env: Record<string, string>): Promise<GatewayProcess> {
  return retryOnPortClash(() => startGatewayOnce(env));
}

async function startGatewayOnce(env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [join(repoRoot, 'services/gateway/dist/main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      GATEWAY_PORT: String(port),
      METRICS_PORT: String(metricsPort),
      ADMIN_TOKEN: testAdminToken,
      CLUSTER_SECRET: testClusterSecret,
      LOG_LEVEL: 'warn',
      // Workers that are not running: nothing listens on these ports.
      LLM_ADDR: `127.0.0.1:${await freePort()}`,
      WHISPER_ADDR: `127.0.0.1:${await freePort()}`,
      DIFFUSION_ADDR: `127.0.0.1:${await freePort()}`,
      ANIMATION_ADDR: `127.0.0.1:${await freePort()}`,
      BROWSER_ADDR: `127.0.0.1:${await freePort()}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited during start-up:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway not ready in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    adminToken: testAdminToken,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await once(child, 'exit');
      clearTimeout(timer);
    },
  };
}
