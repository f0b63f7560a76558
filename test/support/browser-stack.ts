import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  startDnsServer,
  startNats,
  startRedis,
  type NatsHandle,
  type RedisHandle,
} from '@switchboard/devcluster';
import { startGateway, type GatewayProcess } from './gateway.js';
import { startS3, type S3Server } from './s3.js';
import { startTestSite, type TestSite } from './test-site.js';
import { startWorker, type WorkerProcess } from './worker.js';

export interface BrowserStack {
  nats: NatsHandle;
  redis: RedisHandle;
  s3: S3Server;
  site: TestSite;
  /** An allow-listed loopback origin where nothing listens: connections are refused. */
  refusedOrigin: string;
  workers: WorkerProcess[];
  gateway: GatewayProcess;
  /** Where this stack's browsers keep their profiles (one folder per test run). */
  profileRoot: string;
  /** The DNS server the workers' address guard resolves with. */
  dnsAddress: string;
  startBrowserWorker(): Promise<WorkerProcess>;
  /** Profile directories left under profileRoot. */
  profiles(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Host names the stack's DNS answers: a public-looking name that is really loopback. */
export const LOOPBACK_ALIAS = 'public-looking.example';

/**
 * Real NATS, Redis, S3 (s3rver), DNS, the test website, `workers` browser workers (real Debian
 * Chromium) and one gateway in front, all on loopback. The workers may open only the test site
 * (BROWSER_ALLOWED_HOSTS); everything else meets the address guard.
 */
export async function startBrowserStack(
  options: {
    workers?: number;
    workerEnv?: Record<string, string>;
    gatewayEnv?: Record<string, string>;
    /** In the test process when absent; spawnGateway for a gateway process (benchmarks). */
    startGateway?: (env: Record<string, string>) => Promise<GatewayProcess>;
  } = {},
): Promise<BrowserStack> {
  const [nats, redis, s3, site, dns] = await Promise.all([
    startNats(),
    startRedis(),
    startS3(),
    startTestSite(),
    startDnsServer({ [LOOPBACK_ALIAS]: ['127.0.0.1'], 'public.example': ['93.184.215.14'] }),
  ]);
  const refusedHost = `127.0.0.1:${await freePort()}`;
  const profileRoot = await mkdtemp(join(tmpdir(), 'sb-profiles-'));
  // Run as root, the workers start Chromium as a user of its own, which must reach its profiles.
  await chmod(profileRoot, 0o711);
  const bucket = 'switchboard-test';
  const startBrowserWorker = () =>
    startWorker('browser', {
      freshPorts: ['DEVTOOLS_PORT'],
      env: {
        ...nats.env('browser'),
        DEVTOOLS_HOST: '127.0.0.1',
        BROWSER_ALLOWED_HOSTS: `${site.host},${refusedHost}`,
        BROWSER_DNS_SERVERS: dns.address,
        BROWSER_PROFILE_ROOT: profileRoot,
        BROWSER_POOL_SIZE: '1',
        BROWSER_NAVIGATION_TIMEOUT_MS: '5000',
        HOME: tmpdir(),
        ...s3.env(bucket),
        ...options.workerEnv,
      },
    });
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < (options.workers ?? 1); i++) workers.push(await startBrowserWorker());
    const gateway = await (options.startGateway ?? startGateway)({
      ...nats.env('gateway'),
      ...redis.env('gateway'),
      BROWSER_ADDR: workers[0]!.address,
      ...s3.env(bucket),
      ...options.gatewayEnv,
    });
    return {
      nats,
      redis,
      s3,
      site,
      refusedOrigin: `http://${refusedHost}`,
      workers,
      gateway,
      profileRoot,
      dnsAddress: dns.address,
      startBrowserWorker,
      profiles: async () => (await readdir(profileRoot)).filter((n) => n.startsWith('sb-browser-')),
      async stop() {
        await gateway.stop();
        await Promise.all(workers.map((w) => w.stop()));
        await Promise.all([nats.stop(), redis.stop(), s3.stop(), site.stop(), dns.close()]);
        await rm(profileRoot, { recursive: true, force: true, maxRetries: 5 });
      },
    };
  } catch (error) {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all([nats.stop(), redis.stop(), s3.stop(), site.stop(), dns.close()]);
    throw error;
  }
}

/** Pids of processes whose command line names `root` (this stack's Chromium browsers and helpers). */
export async function chromiumPids(root: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(root)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
