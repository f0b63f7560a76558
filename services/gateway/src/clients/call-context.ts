import type { Response } from 'express';

/** What every worker call carries: the request id for the logs, and the caller's key id. */
export interface CallContext {
  requestId: string;
  keyId: string;
  /** Aborting it cancels the call (the HTTP client went away). */
  signal?: AbortSignal;
}

export function callContext(res: Response, signal?: AbortSignal): CallContext {
  const { requestId, key } = res.locals.ctx;
  return { requestId, keyId: key?.id ?? '', signal };
}
