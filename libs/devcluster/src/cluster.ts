import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureDevModel } from './dev-models.js';
import { startFakeDid, type FakeDid } from './fake-d-id.js';
import { gatewayKeyPepperEnv } from './key-pepper.js';
import { natsRoles, redisRoles, type NatsRole, type RedisRole } from '@switchboard/broker-auth';
import { startNats, startRedis, type InfraHandle } from './infra.js';
import { startPostgres } from './postgres.js';
import { freePort } from './ports.js';
import { ManagedProcess } from './process.js';
import { exitDescription, Healer, type Restarted } from './restart-policy.js';
import { startPrometheus, type PrometheusHandle, type ScrapeTarget } from './prometheus.js';
import type { Replica } from './replica-set.js';
import { parseReplicas } from './replicas.js';
import { webhookEnv } from './webhook-env.js';
import { WorkerFleet } from './worker-fleet.js';

export type { Replica } from './replica-set.js';

/**
 * The workers, in the order they are started: those the gateway knows how to reach, then the
 * webhook sender, which nothing calls (it takes the cluster's events from JetStream and delivers
 * them to the keys' endpoints) but which starts, scales and reports SERVING like them.
 */
export const workerNames = ['llm', 'whisper', 'diffusion', 'animation', 'browser', 'webhooks'] as const;

/** Workers the gateway never calls: it gets no `<NAME>_ADDR` for them. */
const uncalledWorkers: readonly string[] = ['webhooks'];

export interface ClusterOptions {
  /** Repository root (where services/ and .run/ live). */
  root: string;
  /** The environment the operator gave (its variables pass through to every process). */
  env: NodeJS.ProcessEnv;
  /** Receives every output line of every process, prefixed with its name. */
  onLine?: (service: string, line: string) => void;
  /** Says what the runner did on the operator's behalf (e.g. built development models). */
  onNotice?: (message: string) => void;
  /** Called when a process exits on its own while the cluster runs (brokers included). */
  onCrash?: (service: string, output: string) => void;
  /**
   * Restart a process that exits on its own once the cluster runs, as the kubelet does: after
   * 10 s, doubling up to 5 min, reset after 10 min of running; each step is told to onNotice.
   * Default true; a test that kills processes and wants them to stay dead passes false.
   */
  heal?: boolean;
  readyTimeoutMs?: number;
  /** Only these workers (default: every one whose build exists), e.g. for a test that needs one. */
  workers?: readonly string[];
}

export interface Cluster {
  gatewayUrl: string;
  adminToken: string;
  /** Every process started, by name: infra, workers and the gateway. */
  processes: Map<string, ManagedProcess>;
  /** Names of the workers found and started (those whose build exists). */
  workers: string[];
  /** What the gateway was given to reach each worker (`LLM_ADDR` → `127.0.0.1:<port>` or `llm.switchboard.local:<port>`). */
  workerAddresses: Record<string, string>;
  /** With SWITCHBOARD_REPLICAS: `127.0.0.1:<port>` of the DNS server behind the workers' names. */
  dnsServer: string | undefined;
  /** With SWITCHBOARD_PROMETHEUS=1: `http://127.0.0.1:<port>` of the runner's Prometheus. */
  prometheusUrl: string | undefined;
  /** A worker's running processes, oldest first. */
  replicas(worker: string): Replica[];
  /**
   * One more process of `worker` (SWITCHBOARD_REPLICAS set) on the next loopback address; resolves
   * once it serves and its DNS name answers with it.
   */
  addReplica(worker: string): Promise<Replica>;
  /** Takes a replica (the newest unless named) out of the worker's DNS name, then stops it. */
  removeReplica(worker: string, name?: string): Promise<Replica>;
  stop(): Promise<void>;
}

async function waitForHttp(url: string, proc: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) throw new Error(`${proc.name} exited during start-up:\n${proc.recentOutput()}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`${proc.name} not ready at ${url} within ${timeoutMs} ms:\n${proc.recentOutput()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The whole local cluster: NATS (JetStream) and Redis unless NATS_URL / REDIS_URL point
 * elsewhere, every built worker as its own process on a free gRPC port, then the gateway. Returns
 * once the workers report SERVING and the gateway is ready.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const { root, env } = options;
  const timeout = options.readyTimeoutMs ?? 120_000;
  // Before anything starts: a bad value fails at once, naming what is wrong.
  const replicaCounts = parseReplicas(env.SWITCHBOARD_REPLICAS, workerNames);
  const processes = new Map<string, ManagedProcess>();
  const leaving = new WeakSet<ManagedProcess>();
  const infra: InfraHandle[] = [];
  let fakeAvatarVendor: FakeDid | undefined;
  let prometheus: PrometheusHandle | undefined;
  const late: { fleet?: WorkerFleet } = {};
  let stopping = false;
  // Nothing is restarted during start-up: a process that dies then fails the start.
  let running = false;
  const healer =
    options.heal === false ? undefined : new Healer({ say: (message) => options.onNotice?.(message) });
  /** What restarts a crashed process, by name (a worker replica's is its fleet's). */
  const restarters = new Map<string, { restart: () => Promise<Restarted>; wanted: () => boolean }>();

  // Once only: a test's clean-up may call it again after the test itself did.
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      // Pending restarts are called off; one already starting a process is waited for below.
      const healed = healer?.close();
      // The gateway drains first, then the rest in reverse start order (replicas added at run
      // time before the ones started with the cluster), the brokers last.
      const order = [...processes.values()].reverse();
      order.sort((a, b) => Number(b.name === 'gateway') - Number(a.name === 'gateway'));
      for (const proc of order) await proc.stop(10_000);
      await healed;
      for (const proc of processes.values()) await proc.stop(10_000);
      await prometheus?.stop();
      await late.fleet?.close();
      await fakeAvatarVendor?.close();
      for (const handle of [...infra].reverse()) await handle.stop();
    })());

  /** Starts `services/<service>`, shown in logs as `name` (a replica's own name, `llm-2`). */
  const spawnService = (service: string, serviceEnv: NodeJS.ProcessEnv, name = service) => {
    const proc = new ManagedProcess(
      name,
      process.execPath,
      [join(root, 'services', service, 'dist', 'main.js')],
      undefined,
      {
        env: serviceEnv,
        cwd: root,
        onLine: (line) => options.onLine?.(name, line),
      },
    );
    processes.set(name, proc);
    void proc.exited.then(() => {
      // A replica taken away on purpose leaves the list (unless a restart already replaced it);
      // any other exit is a crash.
      if (leaving.has(proc)) {
        if (processes.get(name) === proc) processes.delete(name);
      } else crashed(name, proc);
    });
    return proc;
  };

  /** A process exited on its own: said to onCrash, and restarted when healing is on. */
  const crashed = (name: string, proc: ManagedProcess) => {
    if (stopping) return;
    options.onCrash?.(name, proc.recentOutput());
    const restarter = restarters.get(name);
    if (!running || healer === undefined || restarter === undefined || healer.isHealing(name)) return;
    late.fleet?.down(name);
    healer.crashed(name, exitDescription(proc.child), restarter.restart, restarter.wanted);
  };

  /** Restarts a broker started here on its own port with its own store, as the same users. */
  const superviseBroker = (name: string, handle: InfraHandle) => {
    restarters.set(name, {
      restart: async () => {
        await handle.restart();
        watchBroker(name, handle);
        return handle.process;
      },
      wanted: () => !stopping,
    });
    watchBroker(name, handle);
  };
  const watchBroker = (name: string, handle: InfraHandle) => {
    const proc = handle.process;
    void proc.exited.then(() => {
      if (handle.process === proc) crashed(name, proc);
    });
  };

  try {
    const stateDir = env.SWITCHBOARD_STATE_DIR || join(root, '.run');
    // Each service's broker settings: its own user on the NATS and Redis started here (fresh
    // passwords per run, in files under <state dir>/credentials), or, for servers the operator
    // names, whatever NATS_* / REDIS_* settings the operator's environment gives every process.
    const credentialsDir = join(stateDir, 'credentials');
    let natsEnv: (role: NatsRole) => NodeJS.ProcessEnv = () => ({});
    if (!env.NATS_URL) {
      // Keys live in JetStream KV: keep its store between runs so created keys survive a restart.
      const storeDir = join(stateDir, 'nats');
      mkdirSync(storeDir, { recursive: true });
      const nats = await startNats({ storeDir, credentialsDir });
      infra.push(nats);
      superviseBroker('nats', nats);
      natsEnv = (role) => nats.env(role);
    }
    let redisEnv: (role: RedisRole) => NodeJS.ProcessEnv = () => ({});
    if (!env.REDIS_URL) {
      const redis = await startRedis({ credentialsDir });
      infra.push(redis);
      superviseBroker('redis', redis);
      redisEnv = (role) => redis.env(role);
    }
    let usageEnv: NodeJS.ProcessEnv = {};
    if (!env.USAGE_DATABASE_URL && !env.USAGE_DATABASE_URL_FILE) {
      // Usage is billing data: kept between runs, flushed to disk on every commit.
      const postgres = await startPostgres({ dataDir: join(stateDir, 'postgres'), fsync: true });
      infra.push(postgres);
      superviseBroker('postgres', postgres);
      mkdirSync(credentialsDir, { recursive: true, mode: 0o700 });
      const urlFile = join(credentialsDir, 'usage-database.url');
      writeFileSync(urlFile, `${postgres.url}\n`, { mode: 0o600 });
      usageEnv = { USAGE_DATABASE_URL_FILE: urlFile };
    }
    // The gateway registers endpoints and the sender delivers: both open the same store.
    const webhooks = webhookEnv(env, usageEnv, stateDir);
    const isRole = <Role extends string>(roles: readonly Role[], name: string): name is Role =>
      (roles as readonly string[]).includes(name);
    const brokerEnv = (name: string): NodeJS.ProcessEnv => ({
      ...(isRole(natsRoles, name) ? natsEnv(name) : {}),
      ...(isRole(redisRoles, name) ? redisEnv(name) : {}),
    });
    const adminToken = env.ADMIN_TOKEN || randomBytes(24).toString('base64url');
    // Gateway → worker calls carry it and workers refuse calls without it; a fresh one per run
    // unless the operator gives one (to run another worker by hand against this cluster).
    const clusterSecret = env.CLUSTER_SECRET || randomBytes(32).toString('hex');
    const modelDir = resolve(root, env.MODEL_DIR || join(stateDir, 'models'));
    const shared: NodeJS.ProcessEnv = {
      ...env,
      CLUSTER_SECRET: clusterSecret,
      MODEL_DIR: modelDir,
      // Without S3 the gateway and the workers share one local folder for stored files.
      OBJECT_STORE_DIR: resolve(root, env.OBJECT_STORE_DIR || join(stateDir, 'objects')),
    };

    const built: string[] = workerNames.filter(
      (name) =>
        (options.workers === undefined || options.workers.includes(name)) &&
        existsSync(join(root, 'services', name, 'dist', 'main.js')),
    );
    const missing = [...(replicaCounts?.keys() ?? [])].filter((name) => !built.includes(name));
    if (missing.length > 0) {
      throw new Error(
        `SWITCHBOARD_REPLICAS names ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not built or not started here (npm run build)`,
      );
    }
    if (env.SWITCHBOARD_FAKE_AVATAR === '1' && built.includes('animation') && !env.AVATAR_API_KEY) {
      // In this process: the avatar back-end works end to end without the vendor.
      fakeAvatarVendor = await startFakeDid();
      Object.assign(shared, {
        AVATAR_BASE_URL: fakeAvatarVendor.url,
        AVATAR_API_KEY: fakeAvatarVendor.apiKey,
      });
      options.onNotice?.('avatar: using the local fake of the D-ID Talks API (SWITCHBOARD_FAKE_AVATAR=1)');
    }
    for (const name of built) {
      const notice = await ensureDevModel(modelDir, name);
      if (notice) options.onNotice?.(notice);
    }
    const fleet = await WorkerFleet.start({
      workers: built,
      counts: replicaCounts,
      envOf: (name) => ({ ...shared, ...brokerEnv(name), ...(name === 'webhooks' ? webhooks : {}) }),
      spawn: (worker, name, workerEnv) => spawnService(worker, workerEnv, name),
      leaving,
      readyTimeoutMs: timeout,
    });
    late.fleet = fleet;
    for (const worker of built) {
      for (const { name } of fleet.replicas(worker)) restarters.set(name, workerRestarter(fleet, name));
    }
    const workerAddresses = Object.fromEntries(
      Object.entries(fleet.gatewayEnv).filter(
        ([name]) =>
          name.endsWith('_ADDR') && !uncalledWorkers.some((w) => name === `${w.toUpperCase()}_ADDR`),
      ),
    ) as Record<string, string>;
    const gatewayWorkerEnv = Object.fromEntries(
      Object.entries(fleet.gatewayEnv).filter(([name]) => !name.endsWith('_ADDR') || name in workerAddresses),
    );

    const gatewayPort = env.GATEWAY_PORT || '8080';
    const gatewayMetricsPort = env.GATEWAY_METRICS_PORT || String(await freePort());
    const gatewayEnv: NodeJS.ProcessEnv = {
      ...shared,
      ...brokerEnv('gateway'),
      ...usageEnv,
      ...webhooks,
      ...gatewayWorkerEnv,
      ADMIN_TOKEN: adminToken,
      ...gatewayKeyPepperEnv(env, stateDir),
      // Loopback unless told otherwise: a development cluster with a printed admin token is not for
      // the network, and a wildcard bind would share its port with another loopback listener.
      GATEWAY_HOST: env.GATEWAY_HOST || '127.0.0.1',
      GATEWAY_PORT: gatewayPort,
      METRICS_PORT: gatewayMetricsPort,
    };
    const gateway = spawnService('gateway', gatewayEnv);
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await waitForHttp(`${gatewayUrl}/readyz`, gateway, timeout);
    // Again on the same port, so its clients reconnect to where they were.
    restarters.set('gateway', {
      restart: async () => {
        const restarted = spawnService('gateway', gatewayEnv);
        try {
          await waitForHttp(`${gatewayUrl}/readyz`, restarted, timeout);
        } catch (error) {
          leaving.add(restarted);
          await restarted.stop();
          throw error;
        }
        return restarted;
      },
      wanted: () => !stopping,
    });
    // Every process the cluster runs now, as Prometheus should see it.
    const scrapeTargets = (): ScrapeTarget[] => [
      { pod: 'gateway-0', address: `127.0.0.1:${gatewayMetricsPort}` },
      ...built.flatMap((worker) => fleet.replicas(worker).map(scrapeTarget)),
    ];
    if (env.SWITCHBOARD_PROMETHEUS === '1') {
      const alerts = join(root, 'deploy/helm/switchboard/files/prometheus/alerts.yaml');
      prometheus = await startPrometheus({
        dir: join(stateDir, 'prometheus'),
        ruleFiles: existsSync(alerts) ? [alerts] : [],
        targets: scrapeTargets(),
        onLine: (line) => options.onLine?.('prometheus', line),
      });
    }
    const rescrape = async <T>(change: Promise<T>): Promise<T> => {
      const result = await change;
      await prometheus?.setTargets(scrapeTargets());
      return result;
    };
    running = true;
    return {
      gatewayUrl,
      adminToken,
      processes,
      workers: built,
      workerAddresses,
      dnsServer: fleet.dnsServer,
      prometheusUrl: prometheus?.url,
      replicas: (worker) => fleet.replicas(worker),
      addReplica: async (worker) => {
        const replica = await rescrape(fleet.add(worker));
        restarters.set(replica.name, workerRestarter(fleet, replica.name));
        return replica;
      },
      removeReplica: (worker, name) => rescrape(fleet.remove(worker, name)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A worker replica comes back on its own address and port, unless it was removed meanwhile. */
function workerRestarter(fleet: WorkerFleet, name: string) {
  return { restart: () => fleet.restart(name), wanted: () => fleet.has(name) };
}

/**
 * A replica as a scrape target. Its pod label is `<worker>-<n>`, as a StatefulSet would name it:
 * the process's own name with replicas (`llm-1`, `llm-2`), `<worker>-0` for the single process of
 * the plain mode.
 */
function scrapeTarget(replica: Replica): ScrapeTarget {
  return {
    pod: replica.name === replica.worker ? `${replica.worker}-0` : replica.name,
    address: new URL(replica.metricsUrl).host,
  };
}
