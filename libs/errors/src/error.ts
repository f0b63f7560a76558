import { type ErrorCode, errorTable, httpStatusOf } from './codes.js';

export interface ErrorOptions {
  message?: string;
  /** The one request field at fault, when there is one. */
  param?: string;
  /** Seconds the client should wait (503 model_loading / no_capacity, 429). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

/** An error the client is meant to see: a stable code, a human message, maybe a field name. */
export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, options: ErrorOptions = {}) {
    super(options.message ?? errorTable[code].message, { cause: options.cause });
    this.name = 'SwitchboardError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get httpStatus(): number {
    return httpStatusOf(this.code);
  }
}

export function isSwitchboardError(error: unknown): error is SwitchboardError {
  return error instanceof SwitchboardError;
}
