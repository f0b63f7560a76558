// For tests: records every span ended in this process in memory, so a test can check that a span
// was created, with which attributes, and under which parent. Not part of the production entry
// point, so the trace SDK is loaded only by tests that ask for it.
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** An ended span, reduced to what tests check. */
export interface CapturedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** undefined for a root span. */
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** 0 unset, 1 ok, 2 error (the API's SpanStatusCode). */
  readonly statusCode: number;
}

export interface SpanCapture {
  /** Every span ended since the capture began (or was cleared), in the order they ended. */
  spans(): CapturedSpan[];
  /** The ended spans called `name`. */
  named(name: string): CapturedSpan[];
  clear(): void;
}

let exporter: InMemorySpanExporter | undefined;

/**
 * Registers a tracer provider (with the async-hooks context manager, so the active span follows
 * awaits) that keeps ended spans in memory. The provider is process-wide: the first call sets it
 * up, later calls clear what was recorded.
 */
export function captureSpans(): SpanCapture {
  if (!exporter) {
    exporter = new InMemorySpanExporter();
    new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
  }
  const memory = exporter;
  memory.reset();
  const spans = (): CapturedSpan[] =>
    memory.getFinishedSpans().map((span) => ({
      name: span.name,
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      parentSpanId: span.parentSpanContext?.spanId,
      attributes: { ...span.attributes },
      statusCode: span.status.code,
    }));
  return {
    spans,
    named: (name) => spans().filter((span) => span.name === name),
    clear: () => memory.reset(),
  };
}
