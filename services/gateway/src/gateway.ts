import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect, type NatsConnection } from 'nats';
import { natsAuthOptions, redisAuthOptions } from '@switchboard/broker-auth';
import { BrowserFleet } from '@switchboard/browser-registry';
import { EventPublisher } from '@switchboard/events';
import { JobBoard } from '@switchboard/jobs';
import { KeyStore } from '@switchboard/keys';
import { createObjectStore } from '@switchboard/objectstore';
import { openUsageStore } from '@switchboard/usage';
import { createConcurrencyLimiter, createRateLimiter, createRedisClient } from '@switchboard/ratelimit';
import {
  createRegistry,
  natsProbe,
  redisProbe,
  startDependencyProbes,
  startMetricsServer,
  type Logger,
} from '@switchboard/telemetry';
import { clientTransport, closeOnce, startWithRollback, type OnRollback } from '@switchboard/grpc';
import { LiveRequests } from './auth/live-requests.js';
import { createWorkerClients } from './clients/index.js';
import type { GatewayConfig } from './config.js';
import { answerClientErrors } from './http/client-errors.js';
import { acceptTraceContextFromTrustedProxies } from './http/trace-headers.js';
import { routeUpgrades } from './http/upgrades.js';
import { registerKeyStoreAge } from './ops/key-store-age.js';
import { createGatewayMetrics } from './ops/metrics.js';
import { JobUsage } from './usage/job-usage.js';
import { meteringOf } from './usage/metering-of.js';
import { SessionUsage } from './usage/session-usage.js';
import { openGatewayWebhooks } from './webhooks/gateway-webhooks.js';
import { NatsLiveness } from './ops/nats-liveness.js';
import { createApp } from './server.js';
import { LiveLinks } from './live/link-store.js';

// For callers that start one from an environment of their own (tests; main.ts reads process.env).
export { gatewayEnvVars, loadGatewayConfig, type GatewayConfig } from './config.js';

/** How long NATS may take to flush on close; a frozen or partitioned broker must not hold it. */
const NATS_DRAIN_LIMIT_MS = 2_000;

export interface RunningGateway {
  server: Server;
  /** The API port actually bound (config.http.port may be 0). */
  port: number;
  metricsPort: number;
  /**
   * Drains as on SIGTERM: no new connections, requests in flight get config.shutdownGraceMs,
   * then every socket still open (streams, DevTools WebSockets) is cut and the broker
   * connections, timers and the metrics listener are closed. Calling it again waits for the
   * same drain.
   */
  close(): Promise<void>;
}

/**
 * Builds and starts one gateway: its broker connections, the Express app, the HTTP server and
 * the metrics listener. Everything it opens belongs to the returned handle (its own metrics
 * registry, no process-wide state), so several gateways can run in one process — tests start
 * them this way — and main.ts only adds the signals.
 */
export function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  return startWithRollback((onRollback) => open(config, logger, onRollback));
}

async function open(config: GatewayConfig, logger: Logger, onRollback: OnRollback): Promise<RunningGateway> {
  const registry = createRegistry('gateway');
  const metrics = createGatewayMetrics(registry);

  // NATS reconnects forever: a broker restart must not take the gateway down.
  const nats = await connect({
    servers: config.natsUrl,
    name: 'switchboard-gateway',
    maxReconnectAttempts: -1,
    ...natsAuthOptions('gateway', config.natsCredentials),
  });
  onRollback(() => nats.close());
  // Pinged twice a second: a broker that stops answering makes this replica unready within 1.5 s.
  const natsLiveness = new NatsLiveness(nats, {
    probeIntervalMs: 500,
    unreadyAfterMs: 1_500,
    maxStalenessMs: config.keysMaxStalenessMs,
  });
  onRollback(() => natsLiveness.close());
  const live = new LiveRequests();
  onRollback(() => live.close());
  const keys = await KeyStore.open(nats, {
    bucket: config.keysBucket,
    pepper: config.keyPepper,
    migrateLegacyWrittenBefore: config.keysMigrateLegacyBefore,
    logger,
  });
  onRollback(() => keys.close());
  await keys.ready;
  registerKeyStoreAge(registry, {
    watching: () => keys.isReady,
    natsSilentForMs: () => natsLiveness.silentForMs(),
  });
  const redis = createRedisClient(config.redisUrl, redisAuthOptions(config.redisCredentials));
  onRollback(() => redis.disconnect());
  const probes = startDependencyProbes(registry, [natsProbe(nats), redisProbe(redis)]);
  onRollback(() => probes.close());
  const limiter = createRateLimiter({ redis, keyPrefix: config.rateLimitPrefix, logger });
  onRollback(() => limiter.close());
  const callPlaces = createConcurrencyLimiter({
    redis,
    keyPrefix: `${config.rateLimitPrefix}:calls`,
    logger,
  });
  onRollback(() => callPlaces.close());
  const usage = await openUsageStore({ url: config.usageDatabaseUrl, logger });
  onRollback(() => usage.close());
  // A database down at start fails nothing (the store retries per call): readiness does not
  // depend on webhooks, whose calls answer 503 meanwhile.
  const webhooks =
    config.webhooks === undefined ? undefined : await openGatewayWebhooks(config.webhooks, logger);
  onRollback(() => webhooks?.store.close());
  const events = new EventPublisher(nats, logger);
  // The routes reach the same Metering through meteringOf(deps): one retry queue per gateway.
  const metering = meteringOf({ usage, events, metrics, logger, keys, config });
  onRollback(() => metering.close());
  const sessionUsage = new SessionUsage(metering, logger);
  onRollback(() => sessionUsage.close());
  // Ended sessions are recorded from the registry's records, those it still holds at start included.
  const fleet = await BrowserFleet.open(nats, { logger, onSessionEnded: sessionUsage.ended });
  onRollback(() => fleet.close());
  sessionUsage.watchForLostWorkers(fleet);
  // Creates the job stream, its consumers and buckets when absent: jobs are accepted (and KEDA
  // sees them pending) before any animation worker has ever started.
  const board = await JobBoard.open(nats, { ...config.jobs, events });
  const jobUsage = new JobUsage(metering, logger);
  await jobUsage.start(board);
  onRollback(() => jobUsage.close());
  const liveLinks = await LiveLinks.open(nats);
  const clients = createWorkerClients(
    config.workers,
    { address: config.animationAddress, board },
    logger,
    fleet,
    { clusterSecret: config.clusterSecret, transport: clientTransport(config.workerTls) },
    { ...config.workerRouting, metrics },
  );
  onRollback(() => clients.close());
  const objects = createObjectStore(config.objectStore);
  // The workers write and own the bucket too; the gateway only reads, so a store that is down
  // at start-up is logged and answered with 503 per request rather than failing start-up.
  objects.ensureReady().then(
    (report) => logger.info({ s3: config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
    (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
  );

  const degradedTimer = setInterval(
    () => metrics.rateLimitDegraded.set(limiter.storeHealthy() ? 0 : 1),
    1000,
  );
  degradedTimer.unref();
  onRollback(() => clearInterval(degradedTimer));

  const app = createApp({
    config,
    logger,
    keys,
    limiter,
    callPlaces,
    clients,
    events,
    metrics,
    objects,
    usage,
    ...(webhooks === undefined ? {} : { webhooks }),
    liveLinks,
    nats: natsLiveness,
    live,
    readiness: {
      keyStoreReady: () => natsLiveness.reachable && keys.isReady && fleet.isWatching,
      rateLimitStoreReady: () => limiter.storeHealthy(),
    },
  });

  const server = createServer(
    {
      // Headers must arrive within the timeout (slowloris); the whole request has no deadline,
      // because uploads may take long at a fair rate — slow bodies are cut by cutSlowBodies.
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: 0,
      // How often Node looks for connections past headersTimeout (its default is 30 s).
      connectionsCheckingInterval: Math.min(1_000, config.http.headersTimeoutMs),
      // Idle keep-alive sockets are closed; streams may stay open for minutes.
      keepAliveTimeout: 65_000,
    },
    app,
  );
  answerClientErrors(server, logger);
  acceptTraceContextFromTrustedProxies(server, config.trustedProxies);
  // Every socket, upgraded ones included: closeAllConnections() knows only HTTP connections, and
  // a DevTools WebSocket left open would keep the drain from ever ending.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let draining = false;
  server.on('request', (_req, res: ServerResponse) => {
    // While draining, a keep-alive connection is closed as soon as its response is done, rather
    // than holding the drain until the grace period ends for a next request it may not send.
    res.once('finish', () => {
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  server.listen(config.http.port, config.http.host);
  onRollback(() => server.close());
  await once(server, 'listening');
  routeUpgrades(server, app);
  const metricsServer = await startMetricsServer(registry, config.metricsPort);
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, metrics_port: metricsServer.port }, 'gateway listening');

  const drain = async (): Promise<void> => {
    logger.info('draining');
    draining = true;
    const forced = setTimeout(() => {
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
    }, config.shutdownGraceMs);
    forced.unref();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(forced);
    clearInterval(degradedTimer);
    probes.close();
    natsLiveness.close();
    live.close();
    clients.close();
    fleet.close();
    jobUsage.close();
    sessionUsage.close();
    metering.close();
    await usage.close();
    await webhooks?.store.close();
    await keys.close();
    await drainNats(nats);
    limiter.close();
    callPlaces.close();
    redis.disconnect();
    await metricsServer.close();
    logger.info('stopped');
  };
  return {
    server,
    port,
    metricsPort: metricsServer.port,
    close: closeOnce(drain),
  };
}

/** Flushes what is pending, within NATS_DRAIN_LIMIT_MS; closes the connection either way. */
async function drainNats(nats: NatsConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, NATS_DRAIN_LIMIT_MS)));
  await Promise.race([nats.drain().catch(() => undefined), limit]);
  clearTimeout(timer);
  if (!nats.isClosed()) await nats.close();
}
