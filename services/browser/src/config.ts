import { z } from 'zod';
import { env, loadConfig } from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import { CHROMIUM_POLICY_DIR } from './chromium/managed-policy.js';
import { AllowedHosts } from './guard/allowed-hosts.js';

const allowedHosts = env.list().superRefine((entries, ctx) => {
  try {
    AllowedHosts.parse(entries);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const schema = z
  .object({
    GRPC_PORT: env.port(50055),
    GRPC_HOST: z.string().default('0.0.0.0'),
    METRICS_PORT: env.port(9464),
    LOG_LEVEL: env.logLevel,
    /** Shared with the gateway (a Kubernetes Secret): gRPC calls and relay upgrades carry it. */
    CLUSTER_SECRET: env.secret(CLUSTER_SECRET_MIN_LENGTH),
    NATS_URL: env.url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222'),
    /**
     * The host gateways reach this worker at (its pod IP in Kubernetes). Sessions are sticky to
     * the worker that owns their Chromium, so the registry records this address, not a Service.
     */
    BROWSER_ADVERTISE_HOST: z.string().min(1).default('127.0.0.1'),
    /** The DevTools relay (WebSocket) that gateways proxy `…/devtools` to. */
    DEVTOOLS_PORT: env.port(9223),
    DEVTOOLS_HOST: z.string().default('0.0.0.0'),
    /** Debian's Chromium; never a downloaded browser build. */
    CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
    /**
     * The folder Chromium reads its managed policies from; the worker refuses to start unless
     * policy/switchboard.json is in force there. Only tests point it elsewhere.
     */
    CHROMIUM_POLICY_DIR: z.string().min(1).default(CHROMIUM_POLICY_DIR),
    /** Browsers launched and connected ahead of time, so create does not wait for a launch. */
    BROWSER_POOL_SIZE: z.coerce.number().int().min(0).default(2),
    /** Sessions this worker runs at once (each one is a Chromium process). */
    BROWSER_MAX_SESSIONS: env.positiveInt(10),
    BROWSER_IDLE_TIMEOUT_MS: env.positiveInt(600_000),
    /** How long navigate, and the navigation a submit causes, may take before 502. */
    BROWSER_NAVIGATION_TIMEOUT_MS: env.positiveInt(30_000),
    /** host[:port] entries exempt from the address guard (tests reach their own local pages). */
    BROWSER_ALLOWED_HOSTS: allowedHosts,
    /** DNS servers (ip[:port]) the address guard resolves with; empty = the system resolver. */
    BROWSER_DNS_SERVERS: env.list(),
    /** Parent folder of each browser's throwaway profile directory. */
    BROWSER_PROFILE_ROOT: z.string().min(1).default('/tmp'),
    SHUTDOWN_GRACE_MS: env.positiveInt(10_000),
    ...objectStoreEnvFields,
  })
  .superRefine(checkObjectStoreEnv)
  .transform((e) => ({
    grpc: { port: e.GRPC_PORT, host: e.GRPC_HOST },
    devtools: { port: e.DEVTOOLS_PORT, host: e.DEVTOOLS_HOST },
    advertiseHost: e.BROWSER_ADVERTISE_HOST,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    clusterSecret: e.CLUSTER_SECRET,
    natsUrl: e.NATS_URL,
    chromiumPath: e.CHROMIUM_PATH,
    chromiumPolicyDir: e.CHROMIUM_POLICY_DIR,
    poolSize: e.BROWSER_POOL_SIZE,
    maxSessions: e.BROWSER_MAX_SESSIONS,
    idleTimeoutMs: e.BROWSER_IDLE_TIMEOUT_MS,
    navigationTimeoutMs: e.BROWSER_NAVIGATION_TIMEOUT_MS,
    allowedHosts: e.BROWSER_ALLOWED_HOSTS,
    dnsServers: e.BROWSER_DNS_SERVERS,
    profileRoot: e.BROWSER_PROFILE_ROOT,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    objectStore: objectStoreConfigFrom(e),
  }));

export type BrowserConfig = ReturnType<typeof loadBrowserConfig>;

export function loadBrowserConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** Every variable the browser worker reads, so the chart and the runner can be checked against it. */
export const browserEnvVars = Object.keys(schema.in.shape);
