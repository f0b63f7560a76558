import { natsCredentialEnvFields, natsCredentialsFrom } from '@switchboard/broker-auth';
import { z } from 'zod';
import {
  checkGrpcServerTlsEnv,
  env,
  grpcServerTlsEnvFields,
  grpcServerTlsFrom,
  loadConfig,
} from '@switchboard/config';
import { CLUSTER_SECRET_MIN_LENGTH } from '@switchboard/grpc';
import { checkObjectStoreEnv, objectStoreConfigFrom, objectStoreEnvFields } from '@switchboard/objectstore';
import { CHROMIUM_POLICY_DIR } from './chromium/managed-policy.js';
import { AllowedHosts, AllowedPorts } from '@switchboard/address-guard';

const allowedHosts = env.list().superRefine((entries, ctx) => {
  try {
    AllowedHosts.parse(entries);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const allowedPorts = env.list().superRefine((entries, ctx) => {
  try {
    AllowedPorts.parse(entries);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
});

const schema = z
  .object({
    GRPC_PORT: env
      .port(50055)
      .describe('gRPC port; grpc.health.v1 reports SERVING once the first pooled Chromium is up.'),
    GRPC_HOST: z.string().default('0.0.0.0').describe('gRPC listen address.'),
    ...grpcServerTlsEnvFields,
    METRICS_PORT: env.port(9464).describe('Port of Prometheus `GET /metrics`.'),
    LOG_LEVEL: env.logLevel,
    ...env.tracingEnvFields,
    CLUSTER_SECRET: env
      .secret(CLUSTER_SECRET_MIN_LENGTH)
      .describe(
        `Shared with the gateway (a Kubernetes Secret), at least ${CLUSTER_SECRET_MIN_LENGTH} characters: gRPC calls and DevTools relay upgrades without it are refused.`,
      ),
    NATS_URL: env
      .url(['nats', 'tls', 'ws', 'wss'], 'nats://127.0.0.1:4222')
      .describe('NATS: the session registry (this worker and its sessions) and events.'),
    ...natsCredentialEnvFields,
    // Sessions are sticky to the worker that owns their Chromium, so the registry records this
    // address, not a Service.
    BROWSER_ADVERTISE_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe(
        'The host gateways reach this worker at (its pod IP in Kubernetes), written to the session registry.',
      ),
    DEVTOOLS_PORT: env
      .port(9223)
      .describe(
        'Port of the DevTools relay (WebSocket) that gateways proxy `…/devtools` to; reachable by gateways only.',
      ),
    DEVTOOLS_HOST: z.string().default('0.0.0.0').describe('Listen address of the DevTools relay.'),
    CHROMIUM_PATH: z
      .string()
      .min(1)
      .default('/usr/bin/chromium')
      .describe("Debian's Chromium; a downloaded browser build is never used."),
    CHROMIUM_POLICY_DIR: z
      .string()
      .min(1)
      .default(CHROMIUM_POLICY_DIR)
      .describe(
        'Where Chromium reads managed policies; the worker refuses to start unless policy/switchboard.json is in force there. Only tests point it elsewhere.',
      ),
    BROWSER_CHROMIUM_USER: z
      .string()
      .min(1)
      .default('switchboard-chromium')
      .describe(
        'The unprivileged user Chromium runs as when the worker runs as root (Chromium refuses its sandbox as root); `npm start`/`npm test` create `switchboard-chromium` when run as root. A worker that is not root runs Chromium as itself and ignores this.',
      ),
    BROWSER_CHROMIUM_SANDBOX: env
      .boolean(true)
      .describe(
        "Chromium's sandbox (renderers under seccomp-bpf in their own user namespaces). The worker refuses to start when it cannot work; `false` launches Chromium with `--no-sandbox` instead, with a warning at every start (docs/security.md).",
      ),
    BROWSER_POOL_SIZE: z.coerce
      .number()
      .int()
      .min(0)
      .default(2)
      .describe('Browsers launched and connected ahead of time, so create does not wait for a launch.'),
    BROWSER_MAX_SESSIONS: env
      .positiveInt(10)
      .describe(
        'Sessions (Chromium processes) this worker runs at once; when every worker is full the cluster answers `503 no_capacity`.',
      ),
    BROWSER_IDLE_TIMEOUT_MS: env.positiveInt(600_000).describe('Idle time after which a session expires.'),
    BROWSER_NAVIGATION_TIMEOUT_MS: env
      .positiveInt(30_000)
      .describe(
        'How long navigate, and the navigation a submit causes, may take before `502 navigation_failed`.',
      ),
    BROWSER_CONTENT_MAX_BYTES: env
      .positiveInt(5 * 1024 * 1024)
      .describe(
        'The bound on each text format of `content` and `scrape` (`html`, `text`, `markdown`, and `links` together), in UTF-8 bytes; a longer one is cut on a character boundary with `truncated: true`.',
      ),
    BROWSER_ALLOWED_HOSTS: allowedHosts.describe(
      '`host[:port]` entries, comma-separated, exempt from the address guard (tests reach their own local pages).',
    ),
    BROWSER_ALLOWED_PORTS: allowedPorts.describe(
      'Ports, comma-separated, that sessions may connect to besides 80 and 443 (on any host the address guard allows). A `host:port` entry of `BROWSER_ALLOWED_HOSTS` opens its own port besides; an entry without a port does not.',
    ),
    BROWSER_SESSION_MEMORY_MB: z.coerce
      .number()
      .int()
      .min(128)
      .default(1024)
      .describe(
        "Memory one session's Chromium may use (resident anonymous and shared memory of its whole process tree, measured twice a second); a session past it is closed with `end_reason: memory_limit`. Size BROWSER_MAX_SESSIONS × this to the pod's memory.",
      ),
    BROWSER_RENDERER_HEAP_MB: z.coerce
      .number()
      .int()
      .min(16)
      .default(512)
      .describe(
        "JavaScript heap limit of each page's renderer (V8 `--max-old-space-size`); a page past it crashes, which closes its session with `end_reason: page_crashed`.",
      ),
    BROWSER_MAX_DEVTOOLS_CONNECTIONS: env
      .positiveInt(8)
      .describe(
        'DevTools WebSockets one session may have open at once (counted by the worker that owns it, whichever gateway they came through); one more is refused with `429 rate_limited`.',
      ),
    BROWSER_MAX_TABS: env
      .positiveInt(10)
      .describe(
        "Tabs one session may have open at once, in all of its browser contexts, the session's own page included. `Target.createTarget` past it gets a CDP error; a tab a page opens past it is closed at once.",
      ),
    BROWSER_DNS_SERVERS: env
      .list()
      .describe(
        'DNS servers (`ip[:port]`, comma-separated) the address guard resolves with; empty = the system resolver.',
      ),
    BROWSER_PROFILE_ROOT: z
      .string()
      .min(1)
      .default('/tmp')
      .describe("Parent folder of each browser's throwaway profile directory."),
    SHUTDOWN_GRACE_MS: env.positiveInt(10_000).describe('How long in-flight calls may finish after SIGTERM.'),
    ...objectStoreEnvFields,
  })
  .superRefine(checkObjectStoreEnv)
  .superRefine(checkGrpcServerTlsEnv)
  .transform((e) => ({
    grpc: {
      port: e.GRPC_PORT,
      host: e.GRPC_HOST,
      tls: grpcServerTlsFrom(e),
      healthPort: e.GRPC_HEALTH_PORT,
    },
    devtools: { port: e.DEVTOOLS_PORT, host: e.DEVTOOLS_HOST },
    advertiseHost: e.BROWSER_ADVERTISE_HOST,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    clusterSecret: e.CLUSTER_SECRET,
    natsUrl: e.NATS_URL,
    natsCredentials: natsCredentialsFrom(e),
    chromiumPath: e.CHROMIUM_PATH,
    chromiumPolicyDir: e.CHROMIUM_POLICY_DIR,
    chromiumUser: e.BROWSER_CHROMIUM_USER,
    chromiumSandbox: e.BROWSER_CHROMIUM_SANDBOX,
    poolSize: e.BROWSER_POOL_SIZE,
    maxSessions: e.BROWSER_MAX_SESSIONS,
    idleTimeoutMs: e.BROWSER_IDLE_TIMEOUT_MS,
    navigationTimeoutMs: e.BROWSER_NAVIGATION_TIMEOUT_MS,
    contentMaxBytes: e.BROWSER_CONTENT_MAX_BYTES,
    allowedHosts: e.BROWSER_ALLOWED_HOSTS,
    allowedPorts: e.BROWSER_ALLOWED_PORTS,
    sessionBounds: {
      memoryLimitMb: e.BROWSER_SESSION_MEMORY_MB,
      rendererHeapMb: e.BROWSER_RENDERER_HEAP_MB,
      maxDevtoolsConnections: e.BROWSER_MAX_DEVTOOLS_CONNECTIONS,
      maxTabs: e.BROWSER_MAX_TABS,
    },
    dnsServers: e.BROWSER_DNS_SERVERS,
    profileRoot: e.BROWSER_PROFILE_ROOT,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    objectStore: objectStoreConfigFrom(e),
  }));

export type BrowserConfig = ReturnType<typeof loadBrowserConfig>;

export function loadBrowserConfig(source: Record<string, string | undefined> = process.env) {
  return loadConfig(schema, source);
}

/** The browser worker's environment schema, from which docs/configuration.md is generated. */
export const browserEnvSchema = schema.in;

/** Every variable the browser worker reads, so the chart and the runner can be checked against it. */
export const browserEnvVars = Object.keys(browserEnvSchema.shape);
