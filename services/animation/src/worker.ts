// The animation worker: pulls jobs of the back-ends it serves from the JetStream work queue,
// renders them (ONNX Runtime or the avatar vendor), stores the MP4s and moves the job records.
// It serves grpc.health.v1 (SERVING once its back-ends are ready) and Prometheus, and nothing
// else: the gateway never calls it, so it can scale to zero while jobs wait in the queue.
import { connect } from 'nats';
import { natsAuthOptions } from '@switchboard/broker-auth';
import { EventPublisher } from '@switchboard/events';
import { closeOnce, startGrpcServer, startWithRollback, type GrpcServer } from '@switchboard/grpc';
import { JobTaker } from '@switchboard/jobs';
import { createObjectStore, type ObjectStore } from '@switchboard/objectstore';
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
import type { Backend } from './backends/backend.js';
import { createBackends } from './backends/create.js';
import { describeBackends } from './backends/describe.js';
import type { AnimationConfig } from './config.js';
import { watchQueues } from './jobs/queue-metrics.js';
import { JobRunner } from './jobs/runner.js';
import { createAnimationMetrics } from './metrics.js';

export interface RunningAnimationWorker {
  /** The health port actually bound (config.grpc.port may be 0). */
  readonly port: number;
  readonly metricsPort: number;
  /**
   * Drains as on SIGTERM: NOT_SERVING, jobs under way get config.shutdownGraceMs, then the broker
   * connection and the metrics listener close and the back-ends free their models. Calling it
   * again waits for the same.
   */
  close(): Promise<void>;
}

/**
 * Starts one animation worker: health and metrics listeners, the broker connection and the job
 * runner. The back-ends get ready in the background; each one that does starts taking jobs.
 * Everything it opens belongs to the returned handle, so main.ts only adds the signals.
 */
export function startAnimationWorker(
  config: AnimationConfig,
  logger: Logger,
): Promise<RunningAnimationWorker> {
  return startWithRollback(async (onRollback) => {
    const registry = createRegistry('animation');
    const metrics = createAnimationMetrics(registry);
    const backends = createBackends(config, metrics, logger);
    onRollback(() => Promise.all(backends.map((b) => b.dispose())));
    const store = createObjectStore(config.objectStore);

    const server = await startGrpcServer({
      ...config.grpc,
      logger,
      clusterSecret: config.clusterSecret,
      services: [],
    });
    onRollback(() => server.shutdown(0));
    registerServingGauge(registry, () => server.health.isServing());
    registerCallsInFlightGauge(registry, () => server.callsInFlight());
    const metricsServer = await startMetricsServer(registry, config.metricsPort);
    onRollback(() => metricsServer.close());
    // NATS may come later than this pod (or restart under it): keep reconnecting for ever.
    const nc = await connect({
      servers: config.natsUrl,
      name: 'animation',
      maxReconnectAttempts: -1,
      ...natsAuthOptions('animation', config.natsCredentials),
      waitOnFirstConnect: true,
    });
    onRollback(() => nc.close());
    // S3 only when configured: the local folder fallback is not a dependency that can be unreachable.
    const probes = startDependencyProbes(registry, [
      natsProbe(nc),
      ...(config.objectStore.s3 ? [objectStoreProbe(store)] : []),
    ]);
    onRollback(() => probes.close());
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

    serveReadyBackends({ backends, store, taker, runner, server, config, logger }).catch((error: unknown) =>
      logger.error({ err: error }, 'back-ends not started; not serving'),
    );

    return {
      port: server.port,
      metricsPort: metricsServer.port,
      close: closeOnce(async () => {
        await server.shutdown(config.shutdownGraceMs);
        stopQueueWatch();
        probes.close();
        await runner.stop(config.shutdownGraceMs);
        await nc.drain();
        await metricsServer.close();
        await Promise.all(backends.map((b) => b.dispose()));
      }),
    };
  });
}

/**
 * Waits for the object store and each back-end, publishes what each one is, and has the runner
 * take the jobs of every back-end that is ready and configured. SERVING only when every back-end
 * it was asked to serve can take jobs.
 */
async function serveReadyBackends(o: {
  backends: readonly Backend[];
  store: ObjectStore;
  taker: JobTaker;
  runner: JobRunner;
  server: GrpcServer;
  config: AnimationConfig;
  logger: Logger;
}): Promise<void> {
  const { backends, logger } = o;
  await o.store.ensureReady().then(
    (report) => logger.info({ s3: o.config.objectStore.s3 !== undefined, ...report }, 'object store ready'),
    (error: unknown) => logger.warn({ err: error }, 'object store not ready'),
  );
  await describeBackends(o.taker, backends, logger);
  const ready = await Promise.allSettled(backends.map((b) => b.ready()));
  await describeBackends(o.taker, backends, logger);
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
      o.runner.serve(backend);
    }
  });
  if (ready.every((outcome) => outcome.status === 'fulfilled')) o.server.health.setAll('SERVING');
}
