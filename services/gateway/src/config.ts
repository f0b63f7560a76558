import {
  natsCredentialEnvFields,
  natsCredentialsFrom,
  redisCredentialEnvFields,
  redisCredentialsFrom,
} from '@switchboard/broker-auth';
import {
  checkGrpcClientTlsEnv,
  env,
  grpcClientTlsEnvFields,
  grpcClientTlsFrom,
  loadConfig,
} from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import { z } from 'zod';
import { AllowedHosts, AllowedPorts } from '@switchboard/address-guard';
import { parseQuotas, QuotaShapeError, type Quotas } from '@switchboard/usage';
import { jobEnvFields, jobSettings } from '@switchboard/jobs';
import {
  defaultTierPolicies,
  KEY_PEPPER_MIN_LENGTH,
  tiers,
  type Tier,
  type TierPolicy,
} from '@switchboard/keys';

/** A tier's quotas, checked by the same rules as a key's (no null: a tier has nothing to remove). */
const tierQuotas = z.unknown().transform((value, ctx): Quotas => {
  try {
    return parseQuotas(value, 'quotas', false);
  } catch (error) {
    if (!(error instanceof QuotaShapeError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

const webhookAllowedHosts = env.list().superRefine((entries, ctx) => {
  try {
    AllowedHosts.parse(entries, AllowedPorts.any(), 'WEBHOOK_ALLOWED_HOSTS');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const postgresUrl = z.string().refine((value) => {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'expected a postgres or postgresql URL');

const tierPolicy = z.object({
  requests_per_minute: z.number().int().positive(),
  browser_sessions: z.number().int().min(0),
  upload_limit_bytes: z.number().int().positive(),
  animation_jobs: z.number().int().min(0),
  model_calls: z.number().int().positive(),
  quotas: tierQuotas,
});

const MB = 1_000_000;

const tierOverrides = z
  .object(
    Object.fromEntries(tiers.map((t) => [t, tierPolicy.partial().optional()])) as Record<
      Tier,
      z.ZodOptional<ReturnType<typeof tierPolicy.partial>>
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
    GATEWAY_PORT: env.port(8080).describe('HTTP port of the API.'),
    GATEWAY_HOST: z.string().default('::').describe('Listen address (`::` accepts IPv4 and IPv6).'),
    METRICS_PORT: env
      .port(9464)
      .describe('Port of Prometheus `GET /metrics` (its own port, not exposed with the API).'),
    LOG_LEVEL: env.logLevel,
    ...env.tracingEnvFields,
    ADMIN_TOKEN: env
      .secret(16)
      .describe(
        'Bearer token of `/admin/api`, at least 16 characters (`npm start` generates and prints one).',
      ),
    CLUSTER_SECRET: env
      .secret(CLUSTER_SECRET_MIN_LENGTH)
      .describe(
        `Shared with every worker (a Kubernetes Secret), at least ${CLUSTER_SECRET_MIN_LENGTH} characters: sent with each gRPC call and DevTools upgrade (\`npm start\` generates one per run).`,
      ),
    KEY_PEPPER: env
      .secret(KEY_PEPPER_MIN_LENGTH)
      .describe(
        `Key the API keys' secrets are hashed with (HMAC), at least ${KEY_PEPPER_MIN_LENGTH} characters; the same on every gateway replica, never in the key store. Changing it invalidates every key (\`npm start\` keeps one under \`.run/credentials/\`).`,
      ),
    IP_ALLOWLIST: env
      .cidrList()
      .describe('Cluster-wide allowlist: comma-separated IPv4/IPv6 CIDRs; empty = every address.'),
    TRUSTED_PROXIES: env
      .cidrList()
      .describe('CIDRs of proxies whose `X-Forwarded-For` (and `X-Forwarded-Proto`/`-Host`) is believed.'),
    NATS_URL: env
      .url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222')
      .describe('NATS with JetStream: key store (KV and watch), session registry, animation jobs, events.'),
    REDIS_URL: env
      .url(['redis', 'rediss'], 'redis://127.0.0.1:6379')
      .describe('Redis holding the rate-limit counters shared by gateway replicas.'),
    USAGE_DATABASE_URL: env
      .url(['postgres', 'postgresql'], 'postgresql://127.0.0.1:5432/switchboard')
      .describe(
        'PostgreSQL holding usage records, their rollups and quota reservations, shared by every gateway replica (credentials in the URL; give it as `USAGE_DATABASE_URL_FILE` in a cluster).',
      ),
    WEBHOOK_SECRETS_KEY: env
      .secret(32)
      .optional()
      .describe(
        "Key the webhook endpoints' signing secrets are sealed with in PostgreSQL (AES-256-GCM), at least 32 characters; the same on every gateway replica and webhook sender. Unset = webhooks are off: the `/webhooks` calls answer `503 unavailable` (`npm start` keeps one under `.run/credentials/`).",
      ),
    WEBHOOK_DATABASE_URL: postgresUrl
      .optional()
      .describe(
        'PostgreSQL holding webhook endpoints, their sealed secrets and the delivery log, shared with the webhook senders; unset = USAGE_DATABASE_URL (give it as `WEBHOOK_DATABASE_URL_FILE` in a cluster).',
      ),
    WEBHOOK_ALLOWED_HOSTS: webhookAllowedHosts.describe(
      '`host[:port]` entries, comma-separated, exempt from the address guard when an endpoint is registered, and allowed `http://` (tests reach their own receivers on 127.0.0.1). Give the senders the same list.',
    ),
    WEBHOOK_DNS_SERVERS: env
      .list()
      .describe(
        "DNS servers (`ip[:port]`, comma-separated) an endpoint's host is resolved with when it is registered; empty = the system resolver.",
      ),
    ...natsCredentialEnvFields,
    ...redisCredentialEnvFields,
    KEYS_BUCKET: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default('switchboard_keys')
      .describe('KV bucket of the API keys (`<bucket>_usage` holds their last-used times).'),
    RATE_LIMIT_PREFIX: z.string().default('sb:rl').describe('Prefix of the rate-limit counters in Redis.'),
    AUTH_FAILURES_PER_MINUTE: env
      .positiveInt(30)
      .describe(
        'Failed API-key authentications allowed per client address (IPv4 address, IPv6 /64) per minute.',
      ),
    ADMIN_AUTH_FAILURES_PER_MINUTE: env
      .positiveInt(10)
      .describe('Wrong admin tokens allowed per client address per minute (a budget of its own).'),
    KEYS_MAX_STALENESS_MS: env
      .positiveInt(30_000)
      .describe(
        "How long keys are honoured from the replica's cache while NATS does not answer; then `503 unavailable`.",
      ),
    KEYS_MIGRATE_LEGACY_HASHES_BEFORE: z.iso
      .datetime({ offset: true })
      .transform((value) => Date.parse(value))
      // A future instant would migrate records written from now on, forged ones included.
      .refine((instant) => instant <= Date.now(), 'must not be in the future')
      .optional()
      .describe(
        'One-time upgrade of keys created before KEY_PEPPER existed (plain SHA-256 hashes, refused otherwise): an ISO 8601 instant, e.g. `2026-05-01T12:00:00Z`, not in the future; at start the gateway peppers the records the key store last wrote before it, never any written later. Remove it after the upgrade (docs/security.md).',
      ),
    PUBLIC_BASE_URL: z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+\/?$/, 'expected an http(s) origin, e.g. https://api.example.com')
      .optional()
      .describe(
        'Origin clients reach the API at (e.g. `https://api.example.com`), for URLs the gateway hands out (`devtools_url`); unset = from the request.',
      ),
    HTTP_HEADERS_TIMEOUT_MS: env
      .positiveInt(15_000)
      .describe("A request's headers must arrive within this time."),
    HTTP_BODY_MIN_BYTES_PER_SECOND: env
      .positiveInt(1024)
      .describe('A body arriving slower than this over a window of HTTP_BODY_RATE_WINDOW_MS is cut.'),
    HTTP_BODY_RATE_WINDOW_MS: env
      .positiveInt(10_000)
      .describe('The window over which HTTP_BODY_MIN_BYTES_PER_SECOND is measured.'),
    HTTP_LINGER_MS: env
      .positiveInt(30_000)
      .describe(
        'After an answer sent before the body was read (401, 413, …), how long the rest of the body is still read and dropped so the client sees the answer; then the connection is cut.',
      ),
    HTTP_LINGER_MAX_BYTES: env
      .positiveInt(64 * MB)
      .describe('The most body bytes read and dropped after such an answer; past it the connection is cut.'),
    TIER_POLICIES: env
      .json(tierOverrides, '{}')
      .describe(
        'JSON overriding any field of any tier, e.g. `{"basic":{"requests_per_minute":120}}`; fields `requests_per_minute`, `browser_sessions`, `upload_limit_bytes`, `animation_jobs`, `model_calls`; `{}` keeps the documented tier limits.',
      ),
    JSON_BODY_LIMIT_BYTES: env
      .positiveInt(1 * MB)
      .describe('Body limit of every JSON route, `/animate` included (larger media go in streamed uploads).'),
    LLM_ADDR: env.address('127.0.0.1:50051').describe('host:port of the llm workers (gRPC).'),
    WHISPER_ADDR: env.address('127.0.0.1:50052').describe('host:port of the whisper workers (gRPC).'),
    DIFFUSION_ADDR: env.address('127.0.0.1:50053').describe('host:port of the diffusion workers (gRPC).'),
    ANIMATION_ADDR: env
      .address('127.0.0.1:50054')
      .describe(
        "host:port of the animation workers, only for the dashboard's health view (jobs go through JetStream).",
      ),
    BROWSER_ADDR: env
      .address('127.0.0.1:50055')
      .describe(
        "host:port of the browser workers (a Service): health checks, and new sessions while no worker has announced itself; a session's calls go to the worker that owns it.",
      ),
    BROWSER_KEY_CAPACITY_SHARE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(0.5)
      .describe(
        "Share of the cluster's current browser capacity (the sessions the live browser workers can run at once) one key may hold while other keys are being turned away with `503 no_capacity`: a key holding ⌊share × capacity⌋ (at least 1) gets `503 no_capacity` for more while a key below its share was refused within the last 30 s and has not been served since. Bites only under contention; the tier's session limit applies as ever; 1 turns it off (docs/browser-sessions.md).",
      ),
    WORKER_DNS_SERVER: z
      .string()
      .regex(
        /^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-fA-F:.]+\]:\d{1,5}|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*)$/,
        'expected an IP address with an optional port, e.g. 127.0.0.1:5353 or [::1]:53',
      )
      .optional()
      .describe(
        "DNS server (`ip[:port]`) the llm, whisper and diffusion names in `<NAME>_ADDR` are resolved with, every A and AAAA record each time; unset = the system's resolver (in Kubernetes, the cluster DNS behind a headless Service). The local runner points it at its own (docs/scaling.md).",
      ),
    ...grpcClientTlsEnvFields,
    WORKER_RESOLVE_INTERVAL_MS: env
      .positiveInt(5_000)
      .describe(
        'How often the llm, whisper and diffusion names are resolved again, so replicas added or removed while the gateway runs get or stop getting calls.',
      ),
    LLM_DEADLINE_MS: env.positiveInt(300_000).describe('Deadline of each llm call.'),
    WHISPER_DEADLINE_MS: env.positiveInt(600_000).describe('Deadline of each whisper call.'),
    DIFFUSION_DEADLINE_MS: env.positiveInt(600_000).describe('Deadline of each diffusion call.'),
    BROWSER_DEADLINE_MS: env.positiveInt(60_000).describe('Deadline of each browser call.'),
    SHUTDOWN_GRACE_MS: env
      .positiveInt(10_000)
      .describe('How long in-flight requests may finish after SIGTERM.'),
    STREAM_PING_INTERVAL_MS: env
      .positiveInt(15_000)
      .describe('Interval of the `: ping` comment on streamed (SSE) responses.'),
    STREAM_FIRST_EVENT_WAIT_MS: env
      .positiveInt(1_000)
      .describe(
        "How long a streamed `/query` waits for the worker's first event; a refusal within it is answered as a plain JSON error with its status, after it the `200` stream starts.",
      ),
    ...objectStoreEnvFields,
    ...jobEnvFields,
  })
  .superRefine(checkObjectStoreEnv)
  .superRefine(checkGrpcClientTlsEnv)
  .transform((e) => ({
    http: {
      port: e.GATEWAY_PORT,
      host: e.GATEWAY_HOST,
      jsonBodyLimitBytes: e.JSON_BODY_LIMIT_BYTES,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      bodyRate: { minBytesPerSecond: e.HTTP_BODY_MIN_BYTES_PER_SECOND, windowMs: e.HTTP_BODY_RATE_WINDOW_MS },
      linger: { maxMs: e.HTTP_LINGER_MS, maxBytes: e.HTTP_LINGER_MAX_BYTES },
    },
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    adminToken: e.ADMIN_TOKEN,
    clusterSecret: e.CLUSTER_SECRET,
    ipAllowlist: e.IP_ALLOWLIST,
    trustedProxies: e.TRUSTED_PROXIES,
    natsUrl: e.NATS_URL,
    redisUrl: e.REDIS_URL,
    usageDatabaseUrl: e.USAGE_DATABASE_URL,
    /** Undefined: no secrets key, so webhooks are off and their calls answer 503. */
    webhooks:
      e.WEBHOOK_SECRETS_KEY === undefined
        ? undefined
        : {
            databaseUrl: e.WEBHOOK_DATABASE_URL ?? e.USAGE_DATABASE_URL,
            secretsKey: e.WEBHOOK_SECRETS_KEY,
            allowedHosts: e.WEBHOOK_ALLOWED_HOSTS,
            dnsServers: e.WEBHOOK_DNS_SERVERS,
          },
    natsCredentials: natsCredentialsFrom(e),
    redisCredentials: redisCredentialsFrom(e),
    keysBucket: e.KEYS_BUCKET,
    rateLimitPrefix: e.RATE_LIMIT_PREFIX,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    adminAuthFailuresPerMinute: e.ADMIN_AUTH_FAILURES_PER_MINUTE,
    keysMaxStalenessMs: e.KEYS_MAX_STALENESS_MS,
    keyPepper: e.KEY_PEPPER,
    /** Epoch ms, or undefined: no migration. */
    keysMigrateLegacyBefore: e.KEYS_MIGRATE_LEGACY_HASHES_BEFORE,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/$/, ''),
    tiers: e.TIER_POLICIES,
    workers: {
      llm: { address: e.LLM_ADDR, deadlineMs: e.LLM_DEADLINE_MS },
      whisper: { address: e.WHISPER_ADDR, deadlineMs: e.WHISPER_DEADLINE_MS },
      diffusion: { address: e.DIFFUSION_ADDR, deadlineMs: e.DIFFUSION_DEADLINE_MS },
      browser: {
        address: e.BROWSER_ADDR,
        deadlineMs: e.BROWSER_DEADLINE_MS,
        // Travels with the endpoint to the session router (clients/session-router.ts).
        keyCapacityShare: e.BROWSER_KEY_CAPACITY_SHARE,
      },
    },
    /** How the llm, whisper and diffusion names are resolved into replicas (clients/worker-endpoint.ts). */
    workerRouting: { dnsServer: e.WORKER_DNS_SERVER, resolveIntervalMs: e.WORKER_RESOLVE_INTERVAL_MS },
    /** TLS of every gRPC call to a worker (GRPC_TLS_*); undefined = plaintext. */
    workerTls: grpcClientTlsFrom(e),
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

/** The gateway's environment schema, from which docs/configuration.md is generated. */
export const gatewayEnvSchema = schema.in;

/** Every variable the gateway reads, so the chart and the runner can be checked against it. */
export const gatewayEnvVars = Object.keys(gatewayEnvSchema.shape);
