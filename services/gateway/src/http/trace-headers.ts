import type { IncomingMessage, Server } from 'node:http';
import { CidrSet, normalizeIp } from './client-ip.js';

/** The W3C trace-context headers a caller may send to make this request part of its trace. */
const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

/**
 * A client outside the cluster must not choose the trace its requests are recorded in (it could
 * attach them to someone else's trace, or flood one trace): only a trusted proxy (TRUSTED_PROXIES)
 * may continue a trace, and from anyone else `traceparent`/`tracestate` are dropped. The HTTP
 * instrumentation reads them in the server's prototype `emit`, so this instance's `emit` runs
 * first and hands it clean headers.
 */
export function acceptTraceContextFromTrustedProxies(
  server: Server,
  trustedProxies: readonly string[],
): void {
  const trusted = new CidrSet(trustedProxies);
  // The prototype's emit, read at each call: the instrumentation may patch it after this runs.
  server.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') dropUntrustedTraceContext(args[0] as IncomingMessage, trusted);
    const emit = Reflect.get(Object.getPrototypeOf(this) as object, 'emit') as Server['emit'];
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as Server['emit'];
}

export function dropUntrustedTraceContext(req: IncomingMessage, trusted: CidrSet): void {
  if (!TRACE_HEADERS.some((name) => name in req.headers)) return;
  if (!trusted.empty && trusted.has(normalizeIp(req.socket.remoteAddress ?? ''))) return;
  for (const name of TRACE_HEADERS) delete req.headers[name];
}
