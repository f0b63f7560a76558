// The environment every model worker reads under the same names (llm, whisper, diffusion), so
// the chart and the local runner can set them alike. Variables that differ per worker carry its
// prefix (LLM_MAX_BATCH, WHISPER_DEFAULT_MODEL, …) and stay in the worker's own schema.
import { z } from 'zod';
import { env, grpcServerTlsEnvFields, grpcServerTlsFrom } from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { ortEnvFields } from './execution.js';

export function modelWorkerEnvFields(defaults: { grpcPort: number; shutdownGraceMs: number }) {
  return {
    GRPC_PORT: env
      .port(defaults.grpcPort)
      .describe('gRPC port; grpc.health.v1 reports SERVING once the models it serves are loaded.'),
    GRPC_HOST: z.string().default('0.0.0.0').describe('gRPC listen address.'),
    ...grpcServerTlsEnvFields,
    METRICS_PORT: env.port(9464).describe('Port of Prometheus `GET /metrics`.'),
    LOG_LEVEL: env.logLevel,
    CLUSTER_SECRET: env
      .secret(CLUSTER_SECRET_MIN_LENGTH)
      .describe(
        `Shared with the gateway (a Kubernetes Secret), at least ${CLUSTER_SECRET_MIN_LENGTH} characters: calls without it are refused UNAUTHENTICATED (health checks excepted).`,
      ),
    MODEL_DIR: z
      .string()
      .default('./models')
      .describe('Model repository root; the worker reads MODEL_DIR/<capability>/<model-id>/.'),
    SHUTDOWN_GRACE_MS: env
      .positiveInt(defaults.shutdownGraceMs)
      .describe('How long in-flight work may finish after SIGTERM.'),
    // Read by the animation worker (its job queue); model workers that do not use it still
    // accept it because the chart and the local runner give every worker NATS_URL, and validate
    // it so a typo still fails start-up.
    NATS_URL: env
      .url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222')
      .describe(
        'NATS server (accepted by every model worker; only the animation worker uses it, for its jobs).',
      ),
    ...ortEnvFields,
  };
}

type ModelWorkerEnv = z.output<z.ZodObject<ReturnType<typeof modelWorkerEnvFields>>>;

/** The common part of a model worker's config, from its parsed environment. */
export function modelWorkerSettings(e: ModelWorkerEnv) {
  return {
    grpc: {
      port: e.GRPC_PORT,
      host: e.GRPC_HOST,
      tls: grpcServerTlsFrom(e),
      healthPort: e.GRPC_HEALTH_PORT,
    },
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
