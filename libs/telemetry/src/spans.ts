import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';

/**
 * A span for work that starts and ends in different places (a wait in a queue, a generation that
 * outlives the call that began it): the caller ends it. A child of the active span; without a
 * tracer provider (tracing off) it is the API's non-recording span, which costs next to nothing.
 */
export function startSpan(service: string, name: string, attributes?: Attributes): Span {
  return trace.getTracer(`switchboard-${service}`).startSpan(name, { attributes });
}

/** Ends `span` as failed with `error`'s message (recorded as an exception event). */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}

/**
 * Runs `work` inside a span named `name` (active, so spans and log lines within it belong to it),
 * ends it when the work settles and marks it failed when the work throws.
 */
export async function withSpan<T>(
  service: string,
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T> | T,
): Promise<T> {
  return trace.getTracer(`switchboard-${service}`).startActiveSpan(name, { attributes }, async (span) => {
    try {
      const result = await work(span);
      span.end();
      return result;
    } catch (error) {
      failSpan(span, error);
      throw error;
    }
  });
}
