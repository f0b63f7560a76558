// The webhook sender: takes the cluster's events from JetStream into the PostgreSQL delivery
// queue, and delivers what is due to each key's endpoints (signed, guarded, retried). It serves
// grpc.health.v1 (SERVING once the stream and the store are ready) and Prometheus, and nothing
// else. It is the only process that connects to addresses outside the cluster, so in the chart its
// pods alone get egress to the internet.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { connect } from 'nats';
import { dnsServerResolver, systemResolver } from '@switchboard/address-guard';
import { natsAuthOptions } from '@switchboard/broker-auth';
import { closeOnce, startGrpcServer, startWithRollback } from '@switchboard/grpc';
import {
  createRegistry,
  natsProbe,
  registerCallsInFlightGauge,
  registerServingGauge,
  startDependencyProbes,
  startMetricsServer,
  type Logger,
} from '@switchboard/telemetry';
import { SecretBox, WebhookStore, webhookAllowedHosts } from '@switchboard/webhooks';
import { ensureEventStream, EventIntake } from './adapters/event-stream.js';
import type { WebhooksConfig } from './config.js';
import { deliverOnce } from './delivery/deliver.js';
import { Dispatcher } from './delivery/dispatcher.js';
import { startPruning } from './delivery/prune.js';
import { createWebhooksMetrics } from './metrics.js';

/** A lease outlives the longest attempt (WEBHOOK_TIMEOUT_MS) by this, the time to record it. */
const LEASE_MARGIN_MS = 15_000;
const PENDING_GAUGE_INTERVAL_MS = 5_000;

export interface RunningWebhookSender {
  readonly port: number;
  readonly metricsPort: number;
  /** This sender's lease owner name. */
  readonly owner: string;
  /**
   * Drains as on SIGTERM: NOT_SERVING, no more events or claims, attempts under way get
   * config.shutdownGraceMs, the rest of the leases are given back, then everything closes.
   */
  close(): Promise<void>;
}

export function startWebhookSender(config: WebhooksConfig, logger: Logger): Promise<RunningWebhookSender> {
  return startWithRollback(async (onRollback) => {
    const registry = createRegistry('webhooks');
    const metrics = createWebhooksMetrics(registry);
    const owner = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;

    const server = await startGrpcServer({
      ...config.grpc,
      logger,
      ...(config.clusterSecret ? { clusterSecret: config.clusterSecret } : {}),
      services: [],
    });
    onRollback(() => server.shutdown(0));
    registerServingGauge(registry, () => server.health.isServing());
    registerCallsInFlightGauge(registry, () => server.callsInFlight());
    const metricsServer = await startMetricsServer(registry, config.metricsPort);
    onRollback(() => metricsServer.close());

    const store = await WebhookStore.open({
      connectionString: config.databaseUrl,
      secretBox: new SecretBox(config.secretsKey),
      logger,
      disableAfterMs: config.disableAfterMs,
    });
    onRollback(() => store.close());
    // NATS may come later than this pod (or restart under it): keep reconnecting for ever.
    const nc = await connect({
      servers: config.natsUrl,
      name: 'webhooks',
      maxReconnectAttempts: -1,
      ...natsAuthOptions('webhooks', config.natsCredentials),
      waitOnFirstConnect: true,
    });
    onRollback(() => nc.close());
    await ensureEventStream(nc);

    const probes = startDependencyProbes(registry, [
      natsProbe(nc),
      {
        dependency: 'postgres',
        check: () => (store.healthy() ? Promise.resolve() : Promise.reject(new Error('store unhealthy'))),
      },
    ]);
    onRollback(() => probes.close());

    const guard = {
      allowed: webhookAllowedHosts(config.allowedHosts),
      resolver: config.dnsServers.length > 0 ? dnsServerResolver(config.dnsServers) : systemResolver(),
    };
    const intake = new EventIntake({ nc, store, metrics, logger });
    const dispatcher = new Dispatcher({
      store,
      owner,
      concurrency: config.concurrency,
      perEndpoint: config.endpointConcurrency,
      perKey: config.keyConcurrency,
      leaseMs: config.timeoutMs + LEASE_MARGIN_MS,
      logger,
      deliver: (delivery) =>
        deliverOnce(delivery, {
          store,
          owner,
          guard,
          timeoutMs: config.timeoutMs,
          retryScheduleMs: config.retryScheduleMs,
          metrics,
          logger,
        }),
    });
    intake.start();
    dispatcher.start();
    const pruner = startPruning(store, logger);
    const pendingTimer = setInterval(() => {
      store.pendingCount().then(
        (count) => metrics.pending.set(count),
        () => undefined,
      );
    }, PENDING_GAUGE_INTERVAL_MS);
    pendingTimer.unref();
    server.health.setAll('SERVING');
    logger.info({ port: server.port, metrics_port: metricsServer.port, owner }, 'webhook sender started');

    return {
      port: server.port,
      metricsPort: metricsServer.port,
      owner,
      close: closeOnce(async () => {
        server.health.setAll('NOT_SERVING');
        clearInterval(pendingTimer);
        pruner.stop();
        await intake.stop();
        await dispatcher.stop(config.shutdownGraceMs);
        probes.close();
        await nc.drain();
        await store.close();
        await server.shutdown(0);
        await metricsServer.close();
      }),
    };
  });
}
