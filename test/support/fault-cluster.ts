// The whole cluster for fault tests: brokers, Postgres, an S3 server, every worker on its tiny
// development models and two gateway processes, each with handles to crash, pause, drain and
// start it again where its peers know it (same port, same data), as an operator or a node failure
// would.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  startNats,
  startPostgres,
  startRedis,
  type NatsHandle,
  type PostgresHandle,
  type RedisHandle,
} from '@switchboard/devcluster';
import {
  buildTinyDiffusion,
  buildTinyLlama,
  buildTinyPortrait,
  buildTinyVideoDiffusion,
  buildTinyWhisper,
} from '@switchboard/models-dev';
import { checkHealth } from '@switchboard/grpc';
import { S3rver, type S3rverInstance } from '@switchboard/objectstore/test-support';
import { admin, createKey, type CreatedKey } from './admin.js';
import { spawnGateway, type GatewayProcess, type SpawnedGateway } from './gateway.js';
import { sleep } from './stack.js';
import { startTestSite, type TestSite } from './test-site.js';
import { TEST_RETRY_SCHEDULE, testWebhookSecretsKey } from './webhooks.js';
import { retryOnPortClash } from './port-clash.js';
import { startWorker, type WorkerProcess } from './worker.js';

export const faultWorkerNames = ['llm', 'whisper', 'diffusion', 'animation', 'browser', 'webhooks'] as const;
export type FaultWorkerName = (typeof faultWorkerNames)[number];

/** A process of the cluster, as a fault test handles it. Every method resolves once it is done. */
export interface FaultProcess {
  readonly name: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** SIGTERM and wait for its own exit (a drain): resolves with its exit code and signal. */
  terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGSTOP: sockets stay open, nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Starts it again on the same ports with the same settings (it must have exited). */
  start(): Promise<void>;
  /** Stops it (SIGTERM, SIGKILL after 5 s) if it runs, then start(). */
  restart(): Promise<void>;
  /** Its recent output (stdout and stderr). */
  output(): string;
}

export interface FaultWorker extends FaultProcess {
  readonly worker: FaultWorkerName;
  /** Where it listens (`127.0.0.1:<port>`), whatever the gateways were given to reach it. */
  readonly address: string;
  /** The running process's metrics URL (a new one after each start). */
  readonly metricsUrl: string;
  /** A metric of the running process, summed over the series that carry `labels`. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/** A gateway process: a GatewayProcess (for admin(), createKey()) that can also be faulted. */
export type FaultGateway = FaultProcess & GatewayProcess;

/** The S3 server, which can go away and come back on the same port with the same objects. */
export interface FaultS3 {
  readonly endpoint: string;
  readonly running: boolean;
  env(): Record<string, string>;
  /** Closes the server (its files kept). */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface FaultClusterOptions {
  /** The workers to run (default: every one). The gateways get an unreachable address for the rest. */
  workers?: readonly FaultWorkerName[];
  /** Gateway processes (default 2). */
  gateways?: number;
  /**
   * What the gateways are given as `<NAME>_ADDR` for a worker listening at `realAddress` (default:
   * that address), e.g. a TCP proxy's address in front of it. Webhooks has no address.
   */
  workerAddress?: (worker: FaultWorkerName, realAddress: string) => string | Promise<string>;
  /** More for every gateway. */
  gatewayEnv?: Record<string, string>;
  /** More for a worker. */
  workerEnv?: Partial<Record<FaultWorkerName, Record<string, string>>>;
}

export interface FaultCluster {
  nats: NatsHandle;
  redis: RedisHandle;
  /** Holds the usage and webhook databases; kill()/restart() keep its files. */
  postgres: PostgresHandle;
  s3: FaultS3;
  /** The local website the browser workers may open. */
  site: TestSite;
  /** The workers started, by name. */
  workers: Partial<Record<FaultWorkerName, FaultWorker>>;
  /** A started worker; throws for one not started. */
  worker(name: FaultWorkerName): FaultWorker;
  gateways: FaultGateway[];
  /** The `<NAME>_ADDR` each gateway got. */
  gatewayWorkerEnv: Record<string, string>;
  /** An enterprise key with a high rate limit, for load. */
  key: CreatedKey;
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  createKey(input?: Parameters<typeof createKey>[1]): Promise<CreatedKey>;
  stop(): Promise<void>;
}

/** Waits for a child's exit (at once if it has exited already). */
async function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  return { code: child.exitCode, signal: child.signalCode };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
async function terminate(child: ChildProcess, graceMs = 60_000) {
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  try {
    return await exitOf(child);
  } finally {
    clearTimeout(timer);
  }
}

/** Fault handles over whatever `launch` starts; `current` is the running (or last) process. */
function faultHandles<
  P extends { child: ChildProcess; output(): string; stop(graceMs?: number): Promise<void> },
>(name: string, launch: () => Promise<P>, first: P) {
  let current = first;
  const running = () => current.child.exitCode === null && current.child.signalCode === null;
  const start = async () => {
    if (running()) throw new Error(`${name} is still running`);
    current = await launch();
  };
  return {
    get current() {
      return current;
    },
    handles: {
      name,
      get pid() {
        return current.child.pid;
      },
      get running() {
        return running();
      },
      async kill() {
        current.child.kill('SIGKILL');
        await exitOf(current.child);
      },
      terminate: () => terminate(current.child),
      pause: () => void current.child.kill('SIGSTOP'),
      resume: () => void current.child.kill('SIGCONT'),
      start,
      async restart() {
        await current.stop(5000);
        await start();
      },
      output: () => current.output(),
    } satisfies FaultProcess,
  };
}

const MODEL_CACHE_VERSION = 'v1';

/**
 * A model repository with every worker's tiny development models, built once and kept under the
 * system's temp folder for later test files (built into a folder of its own, then renamed, so two
 * files starting at once never read a half-built one).
 */
async function devModels(): Promise<string> {
  const dir = join(tmpdir(), `switchboard-fault-models-${MODEL_CACHE_VERSION}`);
  if (existsSync(join(dir, 'complete'))) return dir;
  const building = await mkdtemp(join(tmpdir(), 'switchboard-fault-models-building-'));
  try {
    await Promise.all([
      buildTinyLlama(join(building, 'llm', 'tiny-llama-dev'), { seed: 0 }),
      buildTinyWhisper(join(building, 'whisper', 'tiny-whisper-dev'), { seed: 0 }),
      buildTinyDiffusion(join(building, 'diffusion', 'tiny-sd-dev'), { seed: 0 }),
      buildTinyVideoDiffusion(join(building, 'video-diffusion', 'tiny-svd-dev'), { seed: 0 }),
      buildTinyPortrait(join(building, 'portrait', 'tiny-liveportrait-dev'), { seed: 0 }),
    ]);
    await writeFile(join(building, 'complete'), '');
    await rename(building, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Another file finished first: use its copy.
      if (!existsSync(join(dir, 'complete'))) throw error;
      await rm(building, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

/** How long a worker may take to serve: loading models on cores the load keeps busy is slow. */
const WORKER_START_MS = 180_000;

/**
 * Starts a worker and waits for SERVING, asking each time over a fresh connection: one client's
 * reconnect backoff would grow past its deadline while a slow start keeps the port closed.
 */
async function launchWorker(name: FaultWorkerName, env: Record<string, string>, port?: number) {
  const worker = await startWorker(name, { env, port, waitServing: false });
  for (const deadline = Date.now() + WORKER_START_MS; ; await sleep(250)) {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null)
      throw new Error(`${name} worker exited during start-up:\n${worker.output()}`);
    if ((await checkHealth(worker.address)) === 'SERVING') return worker;
    if (Date.now() > deadline) {
      await worker.stop();
      throw new Error(`${name} worker not SERVING within ${WORKER_START_MS} ms:\n${worker.output()}`);
    }
  }
}

/** s3rver on a port and folder it keeps across stop() and start(). */
async function startFaultS3(directory: string): Promise<FaultS3> {
  let server: S3rverInstance | undefined = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    get running() {
      return server !== undefined;
    },
    env: () => ({
      S3_ENDPOINT: endpoint,
      S3_ACCESS_KEY: 'S3RVER',
      S3_SECRET_KEY: 'S3RVER',
      S3_BUCKET: 'switchboard-faults',
      S3_REGION: 'us-east-1',
    }),
    async stop() {
      const closing = server;
      server = undefined;
      // Open keep-alive connections would hold close() until they idle out.
      closing?.httpServer?.closeAllConnections();
      await closing?.close();
    },
    async start() {
      if (server) return;
      const next = new S3rver({ address: '127.0.0.1', port, silent: true, directory });
      await next.run();
      server = next;
    },
  };
}

/**
 * Starts the cluster: NATS, Redis, Postgres, S3, the test site, the workers (one process each,
 * models loaded) and the gateway processes, plus an enterprise key. Stops what it started if any
 * part fails.
 */
export async function startFaultCluster(options: FaultClusterOptions = {}): Promise<FaultCluster> {
  const names = options.workers ?? faultWorkerNames;
  const root = await mkdtemp(join(tmpdir(), 'sb-faults-'));
  const cleanups: (() => Promise<unknown>)[] = [async () => rm(root, { recursive: true, force: true })];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const modelDir = await devModels();
    const profileRoot = join(root, 'profiles');
    await mkdir(profileRoot);
    // Run as root, the browser worker starts Chromium as a user of its own, which must reach its profile.
    await chmod(profileRoot, 0o711);
    await chmod(root, 0o711);
    const [nats, redis, postgres, s3, site] = await Promise.all([
      startNats(),
      startRedis(),
      startPostgres(),
      startFaultS3(join(root, 's3')),
      startTestSite(),
    ]);
    cleanups.push(
      () => nats.stop(),
      () => redis.stop(),
      () => postgres.stop(),
      () => s3.stop(),
      () => site.stop(),
    );
    const [usageDb, webhookDb] = [await postgres.createDatabase(), await postgres.createDatabase()];
    const webhookShared = {
      WEBHOOK_DATABASE_URL: webhookDb,
      WEBHOOK_SECRETS_KEY: testWebhookSecretsKey,
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    };
    const animationAckWait = { ANIMATION_ACK_WAIT_MS: '3000' };
    const models = { MODEL_DIR: modelDir, ORT_INTRA_OP_THREADS: '1' };
    const envOf = async (name: FaultWorkerName): Promise<Record<string, string>> => {
      // Picked just before the start that binds it: one picked earlier may be taken meanwhile.
      const devtoolsPort = name === 'browser' ? await freePort() : 0;
      const own: Record<FaultWorkerName, () => Record<string, string>> = {
        llm: () => models,
        whisper: () => models,
        diffusion: () => ({ ...models, ...s3.env() }),
        animation: () => ({
          ...models,
          ...nats.env('animation'),
          ...s3.env(),
          ...animationAckWait,
          ANIMATION_VIDEO_DIFFUSION_STEPS: '4',
        }),
        browser: () => ({
          ...nats.env('browser'),
          ...s3.env(),
          DEVTOOLS_PORT: String(devtoolsPort),
          DEVTOOLS_HOST: '127.0.0.1',
          BROWSER_ALLOWED_HOSTS: site.host,
          BROWSER_PROFILE_ROOT: profileRoot,
          BROWSER_POOL_SIZE: '1',
          HOME: tmpdir(),
        }),
        webhooks: () => ({
          ...nats.env('webhooks'),
          ...webhookShared,
          WEBHOOK_RETRY_SCHEDULE: TEST_RETRY_SCHEDULE,
          WEBHOOK_TIMEOUT_MS: '5000',
        }),
      };
      return { ...own[name](), ...options.workerEnv?.[name] };
    };

    const workers: Partial<Record<FaultWorkerName, FaultWorker>> = {};
    // One at a time: model loading is CPU-bound on a machine other test files share.
    for (const name of names) {
      // Fresh ports on each try: another test file may take one between its pick and the bind.
      const { env, first } = await retryOnPortClash(async () => {
        const env = await envOf(name);
        return { env, first: await launchWorker(name, env) };
      });
      const port = Number(first.address.split(':').pop());
      const launch = () => launchWorker(name, env, port);
      const managed = faultHandles<WorkerProcess>(name, launch, first);
      const { handles } = managed;
      cleanups.push(async () => {
        handles.resume();
        if (handles.running) await managed.current.stop(5000);
      });
      workers[name] = Object.assign(handles, {
        worker: name,
        address: first.address,
        get metricsUrl() {
          return managed.current.metricsUrl;
        },
        metric: (metric: string, labels?: Record<string, string>) => managed.current.metric(metric, labels),
      });
    }

    const gatewayWorkerEnv: Record<string, string> = {};
    for (const name of names) {
      if (name === 'webhooks') continue;
      const real = workers[name]!.address;
      gatewayWorkerEnv[`${name.toUpperCase()}_ADDR`] = (await options.workerAddress?.(name, real)) ?? real;
    }
    const gatewayBase = {
      ...nats.env('gateway'),
      ...redis.env('gateway'),
      ...s3.env(),
      ...webhookShared,
      ...animationAckWait,
      USAGE_DATABASE_URL: usageDb,
      ...gatewayWorkerEnv,
      ...options.gatewayEnv,
    };
    const gateways: FaultGateway[] = [];
    for (let i = 0; i < (options.gateways ?? 2); i++) {
      const first = await spawnGateway(gatewayBase);
      const env = {
        ...gatewayBase,
        GATEWAY_PORT: String(first.port),
        METRICS_PORT: new URL(first.metricsUrl).port,
      };
      const { handles } = faultHandles<SpawnedGateway>(`gateway-${i + 1}`, () => spawnGateway(env), first);
      const gateway: FaultGateway = Object.assign(handles, {
        url: first.url,
        port: first.port,
        metricsUrl: first.metricsUrl,
        adminToken: first.adminToken,
        stop: async () => {
          handles.resume();
          if (handles.running) await handles.terminate();
        },
      });
      cleanups.push(() => gateway.stop());
      gateways.push(gateway);
    }
    const gateway = gateways[0]!;
    const key = await createKey(gateway, { tier: 'enterprise', rate_limit_per_minute: 100_000 });
    return {
      nats,
      redis,
      postgres,
      s3,
      site,
      workers,
      worker(name) {
        const found = workers[name];
        if (!found) throw new Error(`the ${name} worker was not started`);
        return found;
      },
      gateways,
      gatewayWorkerEnv,
      key,
      admin: (method, path, body) => admin(gateway, method, path, body),
      createKey: (input) => createKey(gateway, input),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The gateways' log lines for the requests whose ids appear in `texts` (error bodies carry their
 * `request_id`): each failure the cluster caused is logged there at `warn`, with its cause.
 */
export function gatewayLinesNaming(
  cluster: Pick<FaultCluster, 'gateways'>,
  texts: readonly string[],
): string[] {
  const ids = texts.flatMap((text) => [...text.matchAll(/"request_id":"([^"]+)"/g)].map((m) => m[1]!));
  if (ids.length === 0) return [];
  return cluster.gateways.flatMap((g) =>
    g
      .output()
      .split('\n')
      .filter((line) => ids.some((id) => line.includes(id))),
  );
}
