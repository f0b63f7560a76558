import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'nats';
import { BrowserFleet } from '@switchboard/browser-registry';
import { ConfigError } from '@switchboard/config';
import { JobBoard } from '@switchboard/jobs';
import { KeyStore } from '@switchboard/keys';
import { createObjectStore } from '@switchboard/objectstore';
import { createRateLimiter, createRedisClient } from '@switchboard/ratelimit';
import { createLogger, createRegistry, startMetricsServer } from '@switchboard/telemetry';
import { createWorkerClients } from './clients/index.js';
import { loadGatewayConfig } from './config.js';
import { EventPublisher } from '@switchboard/events';
import { LiveRequests } from './auth/live-requests.js';
import { createGatewayMetrics } from './ops/metrics.js';
import { NatsLiveness } from './ops/nats-liveness.js';
import { routeUpgrades } from './http/upgrades.js';
import { createApp } from './server.js';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.logLevel });
  const registry = createRegistry('gateway');
  const metrics = createGatewayMetrics(registry);

  // NATS reconnects forever: a broker restart must not take the gateway down.
  const nats = await connect({
    servers: config.natsUrl,
    name: 'switchboard-gateway',
    maxReconnectAttempts: -1,
  });
  // Pinged twice a second: a broker that stops answering makes this replica unready within 1.5 s.
  const natsLiveness = new NatsLiveness(nats, {
    probeIntervalMs: 500,
    unreadyAfterMs: 1_500,
    maxStalenessMs: config.keysMaxStalenessMs,
  });
  const live = new LiveRequests();
  const keys = await KeyStore.open(nats, { bucket: config.keysBucket, logger });
  await keys.ready;
  const redis = createRedisClient(config.redisUrl);
  const limiter = createRateLimiter({ redis, keyPrefix: config.rateLimitPrefix, logger });
  const fleet = await BrowserFleet.open(nats, { logger });
  const events = new EventPublisher(nats, logger);
  // Creates the job stream, its consumers and buckets when absent: jobs are accepted (and KEDA
  // sees them pending) before any animation worker has ever started.
  const board = await JobBoard.open(nats, { ...config.jobs, events });
  const clients = createWorkerClients(
    config.workers,
    { address: config.animationAddress, board },
    logger,
    fleet,
    config.clusterSecret,
  );
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

  const app = createApp({
    config,
    logger,
    keys,
    limiter,
    clients,
    events,
    metrics,
    objects,
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
  server.listen(config.http.port, config.http.host);
  await once(server, 'listening');
  routeUpgrades(server, app);
  const metricsServer = await startMetricsServer(registry, config.metricsPort);
  logger.info(
    { port: (server.address() as AddressInfo).port, metrics_port: metricsServer.port },
    'gateway listening',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const forced = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    forced.unref();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearInterval(degradedTimer);
    natsLiveness.close();
    live.close();
    clients.close();
    fleet.close();
    await keys.close();
    await nats.drain().catch(() => undefined);
    redis.disconnect();
    await metricsServer.close();
    logger.info('stopped');
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stop(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

main().catch((error: unknown) => {
  // Config errors name every bad variable; anything else is unexpected at start-up.
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
