// The environment every model worker reads under the same names (llm, whisper, diffusion), so
// the chart and the local runner can set them alike. Variables that differ per worker carry its
// prefix (LLM_CONCURRENCY, WHISPER_DEFAULT_MODEL, …) and stay in the worker's own schema.
import { z } from 'zod';
import { env } from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { ortEnvFields } from './execution.js';

export function modelWorkerEnvFields(defaults: { grpcPort: number; shutdownGraceMs: number }) {
  return {
    GRPC_PORT: env.port(defaults.grpcPort),
    GRPC_HOST: z.string().default('0.0.0.0'),
    METRICS_PORT: env.port(9464),
    LOG_LEVEL: env.logLevel,
    /** Shared with the gateway (a Kubernetes Secret): gateway → worker calls carry it. */
    CLUSTER_SECRET: env.secret(CLUSTER_SECRET_MIN_LENGTH),
    /** The model repository root; a worker reads MODEL_DIR/<capability>/<model-id>/. */
    MODEL_DIR: z.string().default('./models'),
    /** In-flight work may finish for this long after SIGTERM. */
    SHUTDOWN_GRACE_MS: env.positiveInt(defaults.shutdownGraceMs),
    /**
     * Accepted, unused by model workers: the chart and the local runner give every worker
     * NATS_URL. Validated so a typo still fails start-up.
     */
    NATS_URL: env.url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222'),
    ...ortEnvFields,
  };
}

type ModelWorkerEnv = z.output<z.ZodObject<ReturnType<typeof modelWorkerEnvFields>>>;

/** The common part of a model worker's config, from its parsed environment. */
export function modelWorkerSettings(e: ModelWorkerEnv) {
  return {
    grpc: { port: e.GRPC_PORT, host: e.GRPC_HOST },
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    clusterSecret: e.CLUSTER_SECRET,
    modelDir: e.MODEL_DIR,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    execution: {
      providers: e.ORT_EXECUTION_PROVIDERS,
      deviceId: e.ORT_DEVICE_ID,
      intraOpThreads: e.ORT_INTRA_OP_THREADS,
    },
  };
}
