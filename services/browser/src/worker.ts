// The browser worker: Chromium sessions from a warm pool, served over gRPC, with a DevTools relay
// and an entry in the session registry so any gateway replica can reach the sessions it owns.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { connect } from 'nats';
import { natsAuthOptions } from '@switchboard/broker-auth';
import { RegistryAnnouncer, SESSION_REFRESH_INTERVAL_MS } from '@switchboard/browser-registry';
import { EventPublisher } from '@switchboard/events';
import { closeOnce, startGrpcServer, startWithRollback } from '@switchboard/grpc';
import { createObjectStore } from '@switchboard/objectstore';
import {
  createRegistry,
  natsProbe,
  objectStoreProbe,
  registerCallsInFlightGauge,
  registerServingGauge,
  startDependencyProbes,
  startMetricsServer,
  type Logger,
} from '@switchboard/telemetry';
import { prepareChromiumHost } from './chromium/prepare-host.js';
import { PooledBrowser } from './chromium/pooled-browser.js';
import type { BrowserConfig } from './config.js';
import { startDevtoolsRelay } from './devtools/relay.js';
import { liveUpgrades } from './live/live-upgrades.js';
import { AllowedHosts, AllowedPorts, dnsServerResolver, systemResolver } from '@switchboard/address-guard';
import { navigationGuard } from './guard/navigation-guard.js';
import { createBrowserMetrics } from './metrics.js';
import { browserService } from './server.js';
import { CapacityHeartbeat } from './sessions/capacity-heartbeat.js';
import { SessionService } from './sessions/session-service.js';

/**
 * How long start-up waits for the first warm browser. A launch takes about a second; one that
 * keeps failing is retried every 2 s, so this is a Chromium that does not start here at all.
 */
const FIRST_BROWSER_TIMEOUT_MS = 60_000;

export interface RunningBrowserWorker {
  /** This worker's id in the session registry. */
  readonly workerId: string;
  /** The gRPC port actually bound (config.grpc.port may be 0). */
  readonly port: number;
  readonly devtoolsPort: number;
  readonly metricsPort: number;
  /**
   * Drains as on SIGTERM: NOT_SERVING and out of the registry, calls in flight get
   * config.shutdownGraceMs, then every session ends, the browsers exit and the listeners and the
   * broker connection close. Calling it again waits for the same.
   */
  close(): Promise<void>;
}

/**
 * Starts one browser worker. It serves (SERVING, and announced in the registry) only once
 * Chromium has proven it starts: a broken install fails start-up with NoWarmBrowserError.
 * Everything it opens belongs to the returned handle, so main.ts only adds the signals.
 */
export function startBrowserWorker(config: BrowserConfig, logger: Logger): Promise<RunningBrowserWorker> {
  return startWithRollback(async (onRollback) => {
    const promRegistry = createRegistry('browser');
    const metrics = createBrowserMetrics(promRegistry);
    // Unique per start, not per process: two workers started in one process (tests) never share it.
    const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    const isolation = await prepareChromiumHost(config, logger);

    const nats = await connect({
      servers: config.natsUrl,
      name: `switchboard-browser-${workerId}`,
      maxReconnectAttempts: -1,
      ...natsAuthOptions('browser', config.natsCredentials),
    });
    onRollback(() => nats.close());
    const events = new EventPublisher(nats, logger);
    const objects = createObjectStore(config.objectStore);
    // Captures answer 503 until the store is ready; a store that is down must not stop sessions.
    objects.ensureReady().then(
      (report) => logger.info({ s3: config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
      (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
    );
    // S3 only when configured: the local folder fallback is not a dependency that can be unreachable.
    const probes = startDependencyProbes(promRegistry, [
      natsProbe(nats),
      ...(config.objectStore.s3 ? [objectStoreProbe(objects)] : []),
    ]);
    onRollback(() => probes.close());

    // Listening first: the registry entry names both ports, and the sessions write that entry.
    const server = await startGrpcServer({
      ...config.grpc,
      logger,
      clusterSecret: config.clusterSecret,
      services: [],
      laterServices: ['Browser'],
    });
    onRollback(() => server.shutdown(0));
    registerServingGauge(promRegistry, () => server.health.isServing());
    registerCallsInFlightGauge(promRegistry, () => server.callsInFlight());
    const allowed = AllowedHosts.parse(config.allowedHosts, AllowedPorts.parse(config.allowedPorts));
    const relay = await startDevtoolsRelay({
      port: config.devtools.port,
      host: config.devtools.host,
      clusterSecret: config.clusterSecret,
      allowed,
      logger,
      tls: config.grpc.tls,
    });
    onRollback(() => relay.close());
    const registry = await RegistryAnnouncer.open(
      nats,
      {
        workerId,
        grpcAddress: hostPort(config.advertiseHost, server.port),
        devtoolsAddress: hostPort(config.advertiseHost, relay.port),
      },
      logger,
    );

    const bounds = config.sessionBounds;
    const resolver = config.dnsServers.length > 0 ? dnsServerResolver(config.dnsServers) : systemResolver();
    const sessions = new SessionService({
      workerId,
      pool: {
        size: config.poolSize,
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
      },
      maxSessions: config.maxSessions,
      idleTimeoutMs: config.idleTimeoutMs,
      navigationTimeoutMs: config.navigationTimeoutMs,
      contentMaxBytes: config.contentMaxBytes,
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
    });
    onRollback(async () => {
      await sessions.shutdown();
      await sessions.pool.close();
    });
    const heartbeat = new CapacityHeartbeat({
      capacity: () => sessions.capacity(),
      registry,
      maxSessions: config.maxSessions,
      metrics,
      logger,
    });
    sessions.onCapacityChange(() => heartbeat.beat());
    server.addServices([browserService(sessions)]);
    relay.serve(sessions);
    relay.serveLive(liveUpgrades({ sessions, clusterSecret: config.clusterSecret, logger }));
    sessions.startSweeper();

    // Serve only once Chromium has proven it starts: a broken install never reaches SERVING.
    const firstBrowser = config.poolSize > 0 ? sessions.pool.whenWarm(FIRST_BROWSER_TIMEOUT_MS) : undefined;
    sessions.pool.fill();
    await firstBrowser;
    onRollback(() => heartbeat.withdraw());
    await heartbeat.announce();
    const refreshTimer = setInterval(() => sessions.refreshRecords(), SESSION_REFRESH_INTERVAL_MS);
    onRollback(() => clearInterval(refreshTimer));
    server.health.setAll('SERVING');

    const metricsServer = await startMetricsServer(promRegistry, config.metricsPort);
    logger.info(
      { port: server.port, devtools_port: relay.port, metrics_port: metricsServer.port, worker_id: workerId },
      'browser worker started',
    );

    return {
      workerId,
      port: server.port,
      devtoolsPort: relay.port,
      metricsPort: metricsServer.port,
      close: closeOnce(async () => {
        await server.shutdown(config.shutdownGraceMs);
        clearInterval(refreshTimer);
        await heartbeat.withdraw();
        await sessions.shutdown();
        await sessions.pool.close();
        await relay.close();
        probes.close();
        await metricsServer.close();
        await nats.drain().catch(() => undefined);
      }),
    };
  });
}

/** host:port, with an IPv6 address in brackets (a pod IP may be either family). */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
