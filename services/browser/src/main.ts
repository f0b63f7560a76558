// The browser worker: Chromium sessions from a warm pool, served over gRPC, with a DevTools relay
// and an entry in the session registry so any gateway replica can reach the sessions it owns.
import { hostname } from 'node:os';
import { connect } from 'nats';
import { natsAuthOptions } from '@switchboard/broker-auth';
import { RegistryAnnouncer, SESSION_REFRESH_INTERVAL_MS } from '@switchboard/browser-registry';
import { ConfigError } from '@switchboard/config';
import { SwitchboardError } from '@switchboard/errors';
import { EventPublisher } from '@switchboard/events';
import { shutdownOnSignals, startGrpcServer } from '@switchboard/grpc';
import { createObjectStore } from '@switchboard/objectstore';
import { createLogger, createRegistry, startMetricsServer } from '@switchboard/telemetry';
import { BrowserPool } from './chromium/browser-pool.js';
import { checkManagedPolicy, ManagedPolicyError } from './chromium/managed-policy.js';
import { PooledBrowser } from './chromium/pooled-browser.js';
import { ChromiumSandboxError } from './chromium/chromium-user.js';
import { prepareChromiumIsolation } from './chromium/sandbox-check.js';
import { removeStaleProfiles } from './chromium/stale-profiles.js';
import { loadBrowserConfig } from './config.js';
import { startDevtoolsRelay } from './devtools/relay.js';
import { AllowedHosts } from './guard/allowed-hosts.js';
import { AllowedPorts } from './guard/allowed-ports.js';
import { dnsServerResolver, systemResolver } from './guard/host-resolver.js';
import { navigationGuard } from './guard/navigation-guard.js';
import { createBrowserMetrics } from './metrics.js';
import { browserService } from './server.js';
import { SessionService } from './sessions/session-service.js';

const HEARTBEAT_INTERVAL_MS = 2_000;

async function main(): Promise<void> {
  const config = loadBrowserConfig();
  const logger = createLogger({ service: 'browser', level: config.logLevel });
  const promRegistry = createRegistry('browser');
  const metrics = createBrowserMetrics(promRegistry);
  const workerId = `${hostname()}-${process.pid}`;

  // Fail closed: without the managed policy, Chromium's own layer of the DevTools policy is gone.
  await checkManagedPolicy(config.chromiumPolicyDir);
  const stale = await removeStaleProfiles(config.profileRoot);
  if (stale > 0) logger.info({ removed: stale }, 'removed profile directories of dead workers');
  // Fail closed: no Chromium for tenants unless its sandbox works (or the operator opted out).
  const isolation = await prepareChromiumIsolation({
    chromiumPath: config.chromiumPath,
    profileRoot: config.profileRoot,
    userName: config.chromiumUser,
    sandbox: config.chromiumSandbox,
    logger,
  });

  const nats = await connect({
    servers: config.natsUrl,
    name: `switchboard-browser-${workerId}`,
    maxReconnectAttempts: -1,
    ...natsAuthOptions('browser', config.natsCredentials),
  });
  const events = new EventPublisher(nats, logger);
  const objects = createObjectStore(config.objectStore);
  // Captures answer 503 until the store is ready; a store that is down must not stop sessions.
  objects.ensureReady().then(
    (report) => logger.info({ s3: config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
    (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
  );

  const allowed = AllowedHosts.parse(config.allowedHosts, AllowedPorts.parse(config.allowedPorts));
  const bounds = config.sessionBounds;
  const resolver = config.dnsServers.length > 0 ? dnsServerResolver(config.dnsServers) : systemResolver();
  // Built once the server has its port (the registry entry names it); the pool asks it earlier.
  const late: { sessions?: SessionService } = {};
  let heartbeat = () => {};
  const pool = new BrowserPool({
    size: config.poolSize,
    maxBrowsers: config.maxSessions,
    inUse: () => late.sessions?.activeCount ?? 0,
    launch: async () => {
      const end = metrics.launchSeconds.startTimer();
      const browser = await PooledBrowser.launch({
        chromiumPath: config.chromiumPath,
        profileRoot: config.profileRoot,
        allowed,
        resolver,
        isolation,
        limits: { rendererHeapMb: bounds.rendererHeapMb, maxTabs: bounds.maxTabs },
        logger,
      });
      end();
      return browser;
    },
    logger,
    onChange: () => heartbeat(),
  });

  const server = await startGrpcServer({
    port: config.grpc.port,
    host: config.grpc.host,
    logger,
    clusterSecret: config.clusterSecret,
    services: [
      browserService(() => {
        if (!late.sessions) throw new SwitchboardError('unavailable');
        return late.sessions;
      }),
    ],
  });
  const relay = await startDevtoolsRelay({
    port: config.devtools.port,
    host: config.devtools.host,
    clusterSecret: config.clusterSecret,
    allowed,
    targets: {
      devtoolsTarget: (id, key) => {
        if (!late.sessions) throw new SwitchboardError('unavailable');
        return late.sessions.devtoolsTarget(id, key);
      },
    },
    logger,
  });
  const registry = await RegistryAnnouncer.open(
    nats,
    {
      workerId,
      grpcAddress: hostPort(config.advertiseHost, server.port),
      devtoolsAddress: hostPort(config.advertiseHost, relay.port),
    },
    logger,
  );
  const live = new SessionService({
    workerId,
    pool,
    maxSessions: config.maxSessions,
    idleTimeoutMs: config.idleTimeoutMs,
    navigationTimeoutMs: config.navigationTimeoutMs,
    bounds: {
      memoryLimitBytes: bounds.memoryLimitMb * 2 ** 20,
      maxDevtoolsConnections: bounds.maxDevtoolsConnections,
    },
    checkUrl: navigationGuard(allowed, resolver),
    objects,
    registry,
    events,
    metrics,
    logger,
    onCapacityChange: () => heartbeat(),
  });
  late.sessions = live;
  // Gateways learn of this worker only once it serves; until then capacity changes (the pool
  // filling) only update the metrics.
  let announced = false;
  const announceCapacity = async () => {
    const capacity = live.capacity();
    metrics.activeSessions.set(capacity.active_sessions ?? 0);
    metrics.poolSize.set(capacity.warm_browsers ?? 0);
    if (!announced) return;
    await registry.announce({
      maxSessions: config.maxSessions,
      activeSessions: capacity.active_sessions ?? 0,
      warmBrowsers: capacity.warm_browsers ?? 0,
    });
  };
  heartbeat = () => {
    announceCapacity().catch((error: unknown) => logger.warn({ err: error }, 'heartbeat not written'));
  };
  live.startSweeper();

  // Serve only once Chromium has proven it starts: a broken install stays NOT_SERVING.
  const firstBrowser = waitForWarmBrowser(pool, config.poolSize);
  pool.fill();
  await firstBrowser;
  announced = true;
  await announceCapacity();
  const heartbeatTimer = setInterval(heartbeat, HEARTBEAT_INTERVAL_MS);
  const refreshTimer = setInterval(() => live.refreshRecords(), SESSION_REFRESH_INTERVAL_MS);
  server.health.setAll('SERVING');

  const metricsServer = await startMetricsServer(promRegistry, config.metricsPort);
  logger.info(
    { port: server.port, devtools_port: relay.port, metrics_port: metricsServer.port, worker_id: workerId },
    'browser worker started',
  );

  shutdownOnSignals(server, {
    logger,
    graceMs: config.shutdownGraceMs,
    onShutdown: async () => {
      clearInterval(heartbeatTimer);
      clearInterval(refreshTimer);
      await registry.withdraw().catch(() => undefined);
      await live.shutdown();
      await pool.close();
      await relay.close();
      await metricsServer.close();
      await nats.drain().catch(() => undefined);
    },
  });
}

function waitForWarmBrowser(pool: BrowserPool, poolSize: number): Promise<void> {
  if (poolSize === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const check = setInterval(() => {
      if (pool.warmCount > 0) {
        clearInterval(check);
        resolve();
      }
    }, 25);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError || error instanceof ManagedPolicyError || error instanceof ChromiumSandboxError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});

/** host:port, with an IPv6 address in brackets (a pod IP may be either family). */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
