// Spans for work that a shared loop does on behalf of many requests (a batch of generations,
// recognition windows, denoising steps). The loop runs in whichever request's async context
// started it, so the active context there is the wrong parent: each request's context is captured
// when it is submitted and its spans are started in that context explicitly.
import { context, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { failSpan, withSpan } from './spans.js';

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

/**
 * Runs `work` inside a span that is a child of `parent` (a context from elsewhere: a message's
 * headers, a request's captured context) rather than of whatever is active here, and makes that
 * span active for the work.
 */
export function withSpanIn<T>(
  parent: TraceParent,
  service: string,
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T> | T,
): Promise<T> {
  return context.with(parent, () => withSpan(service, name, attributes, work));
}

/**
 * One request's way through a shared loop as consecutive spans in its own trace (waiting, then
 * each phase of the work): one span is open at a time, each a child of the context captured when
 * the request was submitted.
 */
export class PhaseSpans {
  private readonly parent: TraceParent = captureTraceParent();
  /** The open phase's span; undefined once the request's way through the loop is over. */
  private span: Span | undefined;
  private phaseStarted = performance.now();

  /** Opens the first phase, `first`, in the trace of the context active now. */
  constructor(
    private readonly service: string,
    first: string,
    private readonly attributes: Attributes,
  ) {
    this.span = startSpanIn(this.parent, service, first, attributes);
  }

  /** Ends the open phase and opens `name`; returns the seconds the ended phase took. */
  next(name: string, attributes: Attributes = {}): number {
    const now = performance.now();
    const seconds = (now - this.phaseStarted) / 1000;
    this.phaseStarted = now;
    if (this.span) {
      this.span.end();
      this.span = startSpanIn(this.parent, this.service, name, { ...this.attributes, ...attributes });
    }
    return seconds;
  }

  /** Ends the open phase, the last, with `attributes` added. */
  end(attributes: Attributes = {}): void {
    this.span?.setAttributes(attributes);
    this.span?.end();
    this.span = undefined;
  }

  /** Ends the open phase as failed with `error`, with `attributes` added. */
  fail(error: unknown, attributes: Attributes = {}): void {
    if (!this.span) return;
    this.span.setAttributes(attributes);
    failSpan(this.span, error);
    this.span = undefined;
  }
}
