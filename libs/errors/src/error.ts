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

/** Seconds a client is asked to wait when a store or broker its call needed could not be reached. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** `503 unavailable` with `Retry-After`: a store or broker the call needs is down for now. */
export function dependencyUnavailable(message: string, cause?: unknown): SwitchboardError {
  return new SwitchboardError('unavailable', {
    message,
    cause,
    retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
  });
}
