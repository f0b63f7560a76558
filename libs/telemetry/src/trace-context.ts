// Spans for work that a shared loop does on behalf of many requests (a batch of generations,
// recognition windows, denoising steps). The loop runs in whichever request's async context
// started it, so the active context there is the wrong parent: each request's context is captured
// when it is submitted and its spans are started in that context explicitly.
import { context, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/** A request's trace context, opaque to callers: what its spans are children of. */
export type TraceParent = Context;

export type { Attributes as SpanAttributes, Span };

/** The context active now (the gRPC call's server span, while tracing is on): capture at submit. */
export function captureTraceParent(): TraceParent {
  return context.active();
}

/** Like startSpan, but a child of `parent` whatever context is active where it is called. */
export function startSpanIn(
  parent: TraceParent,
  service: string,
  name: string,
  attributes?: Attributes,
): Span {
  return trace.getTracer(`switchboard-${service}`).startSpan(name, { attributes }, parent);
}
