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
