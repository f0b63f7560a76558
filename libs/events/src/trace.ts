// Trace context on NATS messages. NATS has no OpenTelemetry instrumentation, so a message carries
// its sender's `traceparent`/`tracestate` in its headers and the receiver continues that trace.
import { headers, type MsgHdrs } from 'nats';
import {
  extractTraceContext,
  injectTraceContext,
  withSpan,
  type SpanAttributes,
  type TraceParent,
} from '@switchboard/telemetry';

export type { TraceParent };

/** Headers carrying the active trace context; undefined when there is none (tracing off). */
export function traceHeaders(): MsgHdrs | undefined {
  const carrier = headers();
  injectTraceContext(carrier);
  return carrier.has('traceparent') ? carrier : undefined;
}

/** The trace context a received message carries: what the work it starts is a child of. */
export function traceContextOf(message: { readonly headers?: MsgHdrs | undefined }): TraceParent {
  return extractTraceContext(message.headers);
}

/**
 * Sends a message inside a span named `name`, with the span's trace context in its headers, so
 * the receiver's spans are children of the send.
 */
export function sendTraced<T>(
  service: string,
  name: string,
  attributes: SpanAttributes,
  send: (headers: MsgHdrs | undefined) => Promise<T>,
): Promise<T> {
  return withSpan(service, name, attributes, () => send(traceHeaders()));
}
