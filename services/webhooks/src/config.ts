import { z } from 'zod';
import { natsCredentialEnvFields, natsCredentialsFrom } from '@switchboard/broker-auth';
import {
  checkGrpcServerTlsEnv,
  env,
  grpcServerTlsEnvFields,
  grpcServerTlsFrom,
  loadConfig,
} from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import {
  DEFAULT_RETRY_SCHEDULE,
  parseDuration,
  parseRetrySchedule,
  webhookAllowedHosts,
} from '@switchboard/webhooks';

const postgresUrl = env.url(['postgres', 'postgresql'], 'postgresql://127.0.0.1:5432/switchboard');

/** Checked here, built by whoever uses it (the config is frozen; the guard keeps its own maps). */
const allowedHosts = env.list().superRefine((entries, ctx) => {
  try {
    webhookAllowedHosts(entries);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const retrySchedule = z
  .string()
  .default(DEFAULT_RETRY_SCHEDULE)
  .transform((text, ctx) => {
    try {
      return parseRetrySchedule(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return parseDuration(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

const schema = z
  .object({
    GRPC_PORT: env.port(50056).describe('gRPC port; serves grpc.health.v1 only (SERVING while delivering).'),
    GRPC_HOST: z.string().default('0.0.0.0').describe('gRPC listen address.'),
    ...grpcServerTlsEnvFields,
    METRICS_PORT: env.port(9464).describe('Port of Prometheus `GET /metrics`.'),
    LOG_LEVEL: env.logLevel,
    ...env.tracingEnvFields,
    NATS_URL: env
      .url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222')
      .describe('NATS with JetStream: the events stream the sender consumes (`SWITCHBOARD_EVENTS`).'),
    ...natsCredentialEnvFields,
    WEBHOOK_DATABASE_URL: postgresUrl.describe(
      'PostgreSQL holding endpoints, their sealed secrets and the delivery log, shared with the gateways (credentials in the URL; give it as `WEBHOOK_DATABASE_URL_FILE` in a cluster).',
    ),
    WEBHOOK_SECRETS_KEY: env
      .secret(32)
      .describe(
        "Key the endpoints' signing secrets are sealed with (AES-256-GCM), at least 32 characters; the gateways' value.",
      ),
    WEBHOOK_RETRY_SCHEDULE: retrySchedule.describe(
      'Waits between attempts, comma-separated durations (`ms`, `s`, `m`, `h`, `d`); each is jittered ±20 %. After the last, the delivery is failed.',
    ),
    WEBHOOK_TIMEOUT_MS: env
      .positiveInt(15_000)
      .describe('An attempt must be answered `2xx` within this (connection included), else it failed.'),
    WEBHOOK_ALLOWED_HOSTS: allowedHosts.describe(
      "`host[:port]` entries, comma-separated, exempt from the address guard and allowed `http://` (tests reach their own receivers on 127.0.0.1); the gateways' list.",
    ),
    WEBHOOK_DNS_SERVERS: env
      .list()
      .describe(
        "DNS servers (`ip[:port]`, comma-separated) an endpoint's host is resolved with before every attempt; empty = the system resolver.",
      ),
    WEBHOOK_DISABLE_AFTER: duration('5d').describe(
      'An endpoint whose deliveries have all failed for this long is disabled (and its key’s other endpoints told).',
    ),
    WEBHOOK_CONCURRENCY: env
      .positiveInt(256)
      .describe(
        'Attempts this sender makes at once (mostly waiting on other servers: an open socket each, a response read up to 1 KB).',
      ),
    WEBHOOK_KEY_CONCURRENCY: env
      .positiveInt(32)
      .describe(
        'Attempts in flight for one API key’s endpoints, across every sender: a key whose every endpoint hangs holds this many, never the rest. Keep it well below WEBHOOK_CONCURRENCY.',
      ),
    WEBHOOK_ENDPOINT_CONCURRENCY: env
      .positiveInt(4)
      .describe(
        'Attempts in flight to one endpoint, across every sender: a slow endpoint holds this many, never the rest.',
      ),
    CLUSTER_SECRET: env
      .secret(CLUSTER_SECRET_MIN_LENGTH)
      .optional()
      .describe(
        "The workers' shared secret, accepted like theirs: the sender serves grpc.health.v1 only, which stays open, so nothing else is there to guard.",
      ),
    SHUTDOWN_GRACE_MS: env
      .positiveInt(20_000)
      .describe(
        'After SIGTERM, attempts under way may finish for this long; the rest give their deliveries back.',
      ),
  })
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    grpc: {
      port: e.GRPC_PORT,
      host: e.GRPC_HOST,
      tls: grpcServerTlsFrom(e),
      healthPort: e.GRPC_HEALTH_PORT,
    },
    clusterSecret: e.CLUSTER_SECRET,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    natsUrl: e.NATS_URL,
    natsCredentials: natsCredentialsFrom(e),
    databaseUrl: e.WEBHOOK_DATABASE_URL,
    secretsKey: e.WEBHOOK_SECRETS_KEY,
    retryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    allowedHosts: e.WEBHOOK_ALLOWED_HOSTS,
    dnsServers: e.WEBHOOK_DNS_SERVERS,
    disableAfterMs: e.WEBHOOK_DISABLE_AFTER,
    concurrency: e.WEBHOOK_CONCURRENCY,
    endpointConcurrency: e.WEBHOOK_ENDPOINT_CONCURRENCY,
    keyConcurrency: e.WEBHOOK_KEY_CONCURRENCY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
  }));

export type WebhooksConfig = ReturnType<typeof loadWebhooksConfig>;

export function loadWebhooksConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** The sender's environment schema, from which docs/configuration.md is generated. */
export const webhooksEnvSchema = schema.in;

/** Every variable the sender reads, so the chart and the runner can be checked against it. */
export const webhooksEnvVars = Object.keys(webhooksEnvSchema.shape);
