import { trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: LevelWithSilent;
  /** Where lines go; stdout when absent. A gateway started inside a test writes to a buffer. */
  destination?: DestinationStream;
}

/**
 * One JSON logger per service instance (one per process in production). Fields that could carry
 * secrets are redacted wherever they appear, as a second line of defence: code should never log
 * them in the first place.
 */
export function createLogger({ service, level = 'info', destination }: LoggerOptions): Logger {
  const options = {
    level,
    base: { service },
    mixin: traceFields,
    redact: {
      paths: [
        'authorization',
        'req.headers.authorization',
        '*.authorization',
        'key',
        'secret',
        '*.key',
        '*.secret',
        'prompt',
        '*.prompt',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Ties a log line to the trace it was written in: the active span's ids while one is recording
 * (tracing on, inside a traced request), nothing otherwise.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
