import { env, loadConfig } from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import { z } from 'zod';
import { jobEnvFields, jobSettings } from '@switchboard/jobs';
import { defaultTierPolicies, tiers, type Tier, type TierPolicy } from '@switchboard/keys';

const tierPolicy = z.object({
  requests_per_minute: z.number().int().positive(),
  browser_sessions: z.number().int().min(0),
  upload_limit_bytes: z.number().int().positive(),
  animation_jobs: z.number().int().min(0),
}) satisfies z.ZodType<TierPolicy>;

const MB = 1_000_000;

const tierOverrides = z
  .object(
    Object.fromEntries(tiers.map((t) => [t, tierPolicy.partial().optional()])) as Record<
      Tier,
      z.ZodOptional<z.ZodObject<{ [K in keyof TierPolicy]: z.ZodOptional<z.ZodNumber> }>>
    >,
  )
  .strict()
  .transform(
    (overrides) =>
      Object.fromEntries(tiers.map((t) => [t, { ...defaultTierPolicies[t], ...overrides[t] }])) as Record<
        Tier,
        TierPolicy
      >,
  );

const schema = z
  .object({
    GATEWAY_PORT: env.port(8080),
    GATEWAY_HOST: z.string().default('::'),
    METRICS_PORT: env.port(9464),
    LOG_LEVEL: env.logLevel,
    ADMIN_TOKEN: env.secret(16),
    /** Shared with every worker (a Kubernetes Secret): each call and DevTools upgrade carries it. */
    CLUSTER_SECRET: env.secret(CLUSTER_SECRET_MIN_LENGTH),
    IP_ALLOWLIST: env.cidrList(),
    TRUSTED_PROXIES: env.cidrList(),
    NATS_URL: env.url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222'),
    REDIS_URL: env.url(['redis', 'rediss'], 'redis://127.0.0.1:6379'),
    KEYS_BUCKET: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default('switchboard_keys'),
    RATE_LIMIT_PREFIX: z.string().default('sb:rl'),
    AUTH_FAILURES_PER_MINUTE: env.positiveInt(30),
    ADMIN_AUTH_FAILURES_PER_MINUTE: env.positiveInt(10),
    KEYS_MAX_STALENESS_MS: env.positiveInt(30_000),
    // Where clients reach the API (e.g. https://api.example.com), for URLs the gateway hands out.
    PUBLIC_BASE_URL: z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+\/?$/, 'expected an http(s) origin, e.g. https://api.example.com')
      .optional(),
    HTTP_HEADERS_TIMEOUT_MS: env.positiveInt(15_000),
    HTTP_BODY_MIN_BYTES_PER_SECOND: env.positiveInt(1024),
    HTTP_BODY_RATE_WINDOW_MS: env.positiveInt(10_000),
    TIER_POLICIES: env.json(tierOverrides, '{}'),
    JSON_BODY_LIMIT_BYTES: env.positiveInt(1 * MB),
    LLM_ADDR: env.address('127.0.0.1:50051'),
    WHISPER_ADDR: env.address('127.0.0.1:50052'),
    DIFFUSION_ADDR: env.address('127.0.0.1:50053'),
    ANIMATION_ADDR: env.address('127.0.0.1:50054'),
    BROWSER_ADDR: env.address('127.0.0.1:50055'),
    LLM_DEADLINE_MS: env.positiveInt(300_000),
    WHISPER_DEADLINE_MS: env.positiveInt(600_000),
    DIFFUSION_DEADLINE_MS: env.positiveInt(600_000),
    BROWSER_DEADLINE_MS: env.positiveInt(60_000),
    SHUTDOWN_GRACE_MS: env.positiveInt(10_000),
    STREAM_PING_INTERVAL_MS: env.positiveInt(15_000),
    STREAM_FIRST_EVENT_WAIT_MS: env.positiveInt(1_000),
    ...objectStoreEnvFields,
    ...jobEnvFields,
  })
  .superRefine(checkObjectStoreEnv)
  .transform((e) => ({
    http: {
      port: e.GATEWAY_PORT,
      host: e.GATEWAY_HOST,
      jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      bodyRate: { minBytesPerSecond: e.HTTP_BODY_MIN_BYTES_PER_SECOND, windowMs: e.HTTP_BODY_RATE_WINDOW_MS },
    },
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    adminToken: e.ADMIN_TOKEN,
    clusterSecret: e.CLUSTER_SECRET,
    ipAllowlist: e.IP_ALLOWLIST,
    trustedProxies: e.TRUSTED_PROXIES,
    natsUrl: e.NATS_URL,
    redisUrl: e.REDIS_URL,
    keysBucket: e.KEYS_BUCKET,
    rateLimitPrefix: e.RATE_LIMIT_PREFIX,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    adminAuthFailuresPerMinute: e.ADMIN_AUTH_FAILURES_PER_MINUTE,
    keysMaxStalenessMs: e.KEYS_MAX_STALENESS_MS,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/$/, ''),
    tiers: e.TIER_POLICIES,
    workers: {
      llm: { address: e.LLM_ADDR, deadlineMs: e.LLM_DEADLINE_MS },
      whisper: { address: e.WHISPER_ADDR, deadlineMs: e.WHISPER_DEADLINE_MS },
      diffusion: { address: e.DIFFUSION_ADDR, deadlineMs: e.DIFFUSION_DEADLINE_MS },
      browser: { address: e.BROWSER_ADDR, deadlineMs: e.BROWSER_DEADLINE_MS },
    },
    /** Only for the dashboard's health view: jobs go through JetStream, never to this address. */
    animationAddress: e.ANIMATION_ADDR,
    jobs: jobSettings(e),
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    streams: { pingIntervalMs: e.STREAM_PING_INTERVAL_MS, firstEventWaitMs: e.STREAM_FIRST_EVENT_WAIT_MS },
    objectStore: objectStoreConfigFrom(e),
  }));

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** Every variable the gateway reads, so the chart and the runner can be checked against it. */
export const gatewayEnvVars = Object.keys(schema.in.shape);
