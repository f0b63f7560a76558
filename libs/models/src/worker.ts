// The life of every inference worker (llm, whisper, diffusion): serve gRPC at once (NOT_SERVING),
// load the models in the background, report SERVING when the default model is ready, drain on
// close(). Requests that come earlier get model_loading. A worker supplies only what differs: how
// to load a model, its metrics and its gRPC service.
import { resolve } from 'node:path';
import {
  closeOnce,
  startGrpcServer,
  startWithRollback,
  type ServerTls,
  type ServiceRegistration,
} from '@switchboard/grpc';
import {
  createRegistry,
  registerCallsInFlightGauge,
  registerServingGauge,
  startDependencyProbes,
  startMetricsServer,
  type DependencyProbe,
  type Logger,
} from '@switchboard/telemetry';
import { Gauge, type Registry } from 'prom-client';
import { ModelRegistry, type ModelDetails } from './registry.js';
import { scanRepository, type ModelEntry } from './repository.js';
import { useLocalModels } from './transformers-env.js';

/** The part of a model worker's validated config this bootstrap reads. */
export interface ModelWorkerConfig {
  readonly grpc: {
    readonly port: number;
    readonly host: string;
    /** TLS files (GRPC_TLS_*); unset = plaintext. */
    readonly tls?: ServerTls | undefined;
    /** The plaintext health-only port for kubelet probes (GRPC_HEALTH_PORT). */
    readonly healthPort?: number | undefined;
  };
  readonly metricsPort: number;
  /** Every call but health must carry it (CLUSTER_SECRET): only gateways have it. */
  readonly clusterSecret: string;
  readonly modelDir: string;
  readonly defaultModel?: string | undefined;
  readonly loadingRetryAfterSeconds: number;
  readonly loadDelayMs: number;
  /** How long calls in flight get to finish on close() before they are cancelled. */
  readonly shutdownGraceMs: number;
}

/** The queue gauges every model worker keeps, whatever else its metrics hold. */
export interface ModelWorkerMetrics {
  readonly queueDepth: { set(value: number): void };
  /** Jobs running now (generations, transcriptions, images). */
  readonly running: { set(value: number): void };
}

/** What a worker's gRPC services are built from. */
export interface ModelWorker<H, M> {
  readonly models: ModelRegistry<H>;
  readonly metrics: M;
  readonly logger: Logger;
}

export interface ModelWorkerSpec<H, M extends ModelWorkerMetrics> {
  /** The capability and service name: `llm`, `whisper`, `diffusion`. */
  readonly name: string;
  readonly config: ModelWorkerConfig;
  createMetrics(registry: Registry): M;
  load(entry: ModelEntry): Promise<H>;
  dispose(handle: H): Promise<void>;
  /** What /models says about a loaded model (dtype, context length, …); see ModelDetails. */
  details?(handle: H): ModelDetails;
  services(worker: ModelWorker<H, M>): ServiceRegistration[];
  /** Brokers and stores the worker uses (switchboard_dependency_up); none by default. */
  readonly dependencies?: readonly DependencyProbe[];
}

export interface RunningModelWorker {
  /** The gRPC port actually bound (config.grpc.port may be 0). */
  readonly port: number;
  readonly metricsPort: number;
  /**
   * Drains as on SIGTERM: NOT_SERVING, calls in flight get config.shutdownGraceMs, then the
   * metrics listener closes and the loaded models are freed. Calling it again waits for the same.
   */
  close(): Promise<void>;
}

/**
 * Starts one model worker: scans its models, serves gRPC and metrics, and loads the models in the
 * background. Everything it opens belongs to the returned handle (its own metrics registry), so
 * main.ts only adds the signals. Transformers.js keeps its model folder process-wide, so a process
 * runs one capability.
 */
export function startModelWorker<H, M extends ModelWorkerMetrics>(
  spec: ModelWorkerSpec<H, M>,
  logger: Logger,
): Promise<RunningModelWorker> {
  return startWithRollback(async (onRollback) => {
    const { config, name } = spec;
    const promRegistry = createRegistry(name);
    const metrics = spec.createMetrics(promRegistry);
    const modelLoadSeconds = new Gauge({
      name: `${name}_model_load_seconds`,
      help: 'How long each model took to load (or to fail).',
      labelNames: ['model', 'status'],
      registers: [promRegistry],
    });

    const scan = await scanRepository(resolve(config.modelDir), name, { defaultModel: config.defaultModel });
    useLocalModels(scan.capabilityDir);
    for (const model of scan.models) {
      if (model.description) logger.warn({ model: model.id, note: model.description }, 'development model');
    }
    const models = new ModelRegistry<H>({
      scan,
      logger,
      load: (entry) => spec.load(entry),
      dispose: (handle) => spec.dispose(handle),
      details: (handle) => spec.details?.(handle) ?? {},
      onLoaded: (entry, status, seconds) => modelLoadSeconds.set({ model: entry.id, status }, seconds),
      loadingRetryAfterSeconds: config.loadingRetryAfterSeconds,
      loadDelayMs: config.loadDelayMs,
    });

    const server = await startGrpcServer({
      ...config.grpc,
      logger,
      clusterSecret: config.clusterSecret,
      services: spec.services({ models, metrics, logger }),
    });
    onRollback(() => server.shutdown(0));
    registerServingGauge(promRegistry, () => server.health.isServing());
    registerCallsInFlightGauge(promRegistry, () => server.callsInFlight());
    const probes = startDependencyProbes(promRegistry, spec.dependencies ?? []);
    onRollback(() => probes.close());
    const metricsServer = await startMetricsServer(promRegistry, config.metricsPort);
    logger.info(
      {
        port: server.port,
        metrics_port: metricsServer.port,
        models: scan.models.length,
        default: scan.defaultId,
      },
      `${name} worker started`,
    );

    models.loadAll().then(
      () => server.health.setAll('SERVING'),
      // Without its default model the worker stays NOT_SERVING; the reason is already logged.
      (error: unknown) => logger.error({ err: error }, 'default model unavailable; not serving'),
    );

    return {
      port: server.port,
      metricsPort: metricsServer.port,
      close: closeOnce(async () => {
        await server.shutdown(config.shutdownGraceMs);
        probes.close();
        await metricsServer.close();
        await models.dispose();
      }),
    };
  });
}
