// OpenTelemetry tracing for one process, exported over OTLP/HTTP. Off unless an OTLP endpoint is
// configured, and then truly off: the SDK and the instrumentations are imported only when it is on,
// so a process without tracing loads none of them and patches nothing.
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { context, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';

export interface Tracing {
  /** Whether spans are exported (an OTLP endpoint is configured). */
  readonly enabled: boolean;
  /** Flushes the spans not yet exported and stops the exporter; idempotent. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** The service (`gateway`, `llm`, …): the resource's service.name is `switchboard-<service>`. */
  readonly service: string;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Whether outgoing HTTP requests get client spans and carry `traceparent` (default true). A
   * process whose requests go to tenants' servers turns it off: the cluster's trace ids are not
   * theirs to see, and its own span around each request says what is needed.
   */
  readonly traceOutgoingHttp?: boolean;
}

/**
 * The process environment. Tracing starts before any service config is loaded (it has to precede
 * the service's imports), and the SDK reads its standard OTEL_* variables from here itself; each
 * service's config schema validates and documents the same variables.
 */
// eslint-disable-next-line no-restricted-properties
const processEnv = process.env;

/** Tracing is on when the OTLP exporter has somewhere to send spans. */
export function tracingEnabled(env: NodeJS.ProcessEnv = processEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * The export headers given as a file (`OTEL_EXPORTER_OTLP_HEADERS_FILE`, as every secret is given
 * to these processes): they often carry a collector's token. The format is the variable's own,
 * `key1=value1,key2=value2` with URL-encoded values. Undefined when no file is named; the exporter
 * still reads `OTEL_EXPORTER_OTLP_HEADERS` itself.
 */
export function otlpHeadersFromFile(env: NodeJS.ProcessEnv = processEnv): Record<string, string> | undefined {
  const file = env.OTEL_EXPORTER_OTLP_HEADERS_FILE;
  if (!file) return undefined;
  const headers: Record<string, string> = {};
  for (const pair of readFileSync(file, 'utf8').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** Paths polled by probes and scrapers: a trace per poll would bury the requests that matter. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz', '/livez']);

/** gRPC methods called on a timer (health watches): not requests anyone follows. */
const UNTRACED_GRPC_METHODS = [/^(check|watch|list)$/i];

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

/**
 * Starts tracing for this process, before anything instrumented (express, @grpc/grpc-js, ioredis)
 * is imported: the instrumentations patch those modules as they load. Services are ES modules, and
 * an ES module importing a CommonJS package does not always pass through the require hooks, so the
 * import-in-the-middle loader hook is registered too. Entry points therefore call this first and
 * import the rest of the service dynamically afterwards.
 */
export async function startTracing({
  service,
  env = processEnv,
  traceOutgoingHttp = true,
}: TracingOptions): Promise<Tracing> {
  if (!tracingEnabled(env)) return OFF;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
    { W3CTraceContextPropagator },
    { registerInstrumentations },
    { HttpInstrumentation },
    { ExpressInstrumentation, ExpressLayerType },
    { GrpcInstrumentation },
    { IORedisInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-grpc'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': `switchboard-${service}` }))
    .merge(detectResources({ detectors: [envDetector] }));
  // The exporter and the batch processor read OTEL_EXPORTER_OTLP_* and OTEL_BSP_* themselves; only
  // headers given as a file are read here.
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ headers: otlpHeadersFromFile(env) }))],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
        // An ignored outgoing request gets no span, so no context is injected into its headers.
        ignoreOutgoingRequestHook: () => !traceOutgoingHttp,
      }),
      // One span per route handler: a span for every middleware and router layer (a dozen per
      // request here) made traces unreadable and cost most of the gateway's throughput under load.
      new ExpressInstrumentation({
        ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER],
      }),
      new GrpcInstrumentation({ ignoreGrpcMethods: UNTRACED_GRPC_METHODS }),
      new IORedisInstrumentation(),
    ],
  });
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown: () => (stopped ??= provider.shutdown()),
  };
}

/** Message headers as NATS has them (`headers()` from nats.js): the carrier of a trace context. */
export interface HeaderCarrier {
  get(key: string): string;
  set(key: string, value: string): void;
}

/** Writes the active trace context (`traceparent`, `tracestate`) into message headers. */
export function injectTraceContext(headers: HeaderCarrier, from: Context = context.active()): void {
  propagation.inject(from, headers, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
}

/**
 * The trace context a message carries, for the work it starts to be a child of the work that
 * sent it; the root context when it carries none (or tracing is off) — never whatever happens to
 * be active in the loop that received it.
 */
export function extractTraceContext(headers: Pick<HeaderCarrier, 'get'> | undefined): Context {
  if (headers === undefined) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, {
    get: (carrier, key) => carrier.get(key) || undefined,
    keys: () => ['traceparent', 'tracestate'],
  });
}
