import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: LevelWithSilent;
}

/**
 * One JSON logger per process. Fields that could carry secrets are redacted wherever they
 * appear, as a second line of defence: code should never log them in the first place.
 */
export function createLogger({ service, level = 'info' }: LoggerOptions): Logger {
  return pino({
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
  });
}
