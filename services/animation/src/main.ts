// The animation worker: pulls jobs of the back-ends it serves from the JetStream work queue,
// renders them (ONNX Runtime or the avatar vendor), stores the MP4s and moves the job records.
// It serves grpc.health.v1 (SERVING once its back-ends are ready) and Prometheus, and nothing
// else: the gateway never calls it, so it can scale to zero while jobs wait in the queue.
import { connect } from 'nats';
import { natsAuthOptions } from '@switchboard/broker-auth';
import { ConfigError } from '@switchboard/config';
import { EventPublisher } from '@switchboard/events';
import { shutdownOnSignals, startGrpcServer } from '@switchboard/grpc';
import { JobTaker } from '@switchboard/jobs';
import { createObjectStore } from '@switchboard/objectstore';
import { createLogger, createRegistry, startMetricsServer } from '@switchboard/telemetry';
import { createBackends } from './backends/create.js';
import { describeBackends } from './backends/describe.js';
import { loadAnimationConfig } from './config.js';
import { JobRunner } from './jobs/runner.js';
import { watchQueues } from './jobs/queue-metrics.js';
import { createAnimationMetrics } from './metrics.js';

async function main(): Promise<void> {
  const config = loadAnimationConfig();
  const logger = createLogger({ service: 'animation', level: config.logLevel });
  const registry = createRegistry('animation');
  const metrics = createAnimationMetrics(registry);
  const backends = createBackends(config, metrics, logger);
  const store = createObjectStore(config.objectStore);

  const server = await startGrpcServer({
    port: config.grpc.port,
    host: config.grpc.host,
    logger,
    clusterSecret: config.clusterSecret,
    services: [],
  });
  const metricsServer = await startMetricsServer(registry, config.metricsPort);
  // NATS may come later than this pod (or restart under it): keep reconnecting for ever.
  const nc = await connect({
    servers: config.natsUrl,
    name: 'animation',
    maxReconnectAttempts: -1,
    ...natsAuthOptions('animation', config.natsCredentials),
    waitOnFirstConnect: true,
  });
  const events = new EventPublisher(nc, logger);
  const taker = await JobTaker.open(nc, { ...config.jobs, events, logger });
  const runner = new JobRunner({
    taker,
    store,
    metrics,
    logger,
    concurrency: config.concurrency,
    ffmpeg: config.ffmpeg,
    encoderThreads: config.encoderThreads,
  });
  const stopQueueWatch = watchQueues(taker, config.backends, metrics, logger);
  logger.info(
    { port: server.port, metrics_port: metricsServer.port, backends: config.backends },
    'animation worker started',
  );

  shutdownOnSignals(server, {
    logger,
    graceMs: config.shutdownGraceMs,
    onShutdown: async () => {
      stopQueueWatch();
      await runner.stop(config.shutdownGraceMs);
      await nc.drain();
      await metricsServer.close();
      await Promise.all(backends.map((b) => b.dispose()));
    },
  });

  await store.ensureReady().then(
    (report) => logger.info({ s3: config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
    (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
  );
  await describeBackends(taker, backends, logger);
  const ready = await Promise.allSettled(backends.map((b) => b.ready()));
  await describeBackends(taker, backends, logger);
  ready.forEach((outcome, i) => {
    const backend = backends[i]!;
    if (outcome.status === 'rejected') {
      logger.error(
        { err: outcome.reason, backend: backend.name },
        'back-end unavailable; not taking its jobs',
      );
    } else if (!backend.describe().configured) {
      // Avatar without vendor settings takes no jobs: a worker that has them may run beside this one.
      logger.warn({ backend: backend.name }, 'back-end not configured; not taking its jobs');
    } else {
      runner.serve(backend);
    }
  });
  // SERVING only when every back-end it was asked to serve can take jobs.
  if (ready.every((outcome) => outcome.status === 'fulfilled')) server.health.setAll('SERVING');
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
