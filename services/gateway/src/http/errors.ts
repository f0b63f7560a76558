import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { SwitchboardError, isSwitchboardError, type ErrorCode } from '@switchboard/errors';
import { isOpenAiPath, openAiErrorBody } from '../openai/errors.js';

/** The gateway's one JSON error shape: a stable code, a message, the request id, the field at fault. */
export function errorBody(error: SwitchboardError, requestId: string) {
  return {
    error: {
      code: error.code,
      message: error.message,
      request_id: requestId,
      ...(error.param !== undefined ? { param: error.param } : {}),
    },
  };
}

/**
 * Sends `error` with its status from the table, or with `httpStatus` where HTTP itself names a
 * finer status for the same code (416 is an `invalid_request` about the Range header).
 */
export function sendError(res: Response, error: SwitchboardError, httpStatus = error.httpStatus): void {
  // An error answered before the body was read (401, 403, 413, …): the connection is not reused.
  // The rest of the body is read and dropped, within bounds, before it closes (lingering-close.ts).
  if (!res.req.complete) res.setHeader('Connection', 'close');
  if (error.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  // The same error, from the same table, in the dialect the route declares: OpenAI's body for
  // OpenAI's clients. A request no route matched (a 404 to be) is worded by its path: under /v1,
  // OpenAI's clients are the ones asking.
  const { requestId } = res.locals.ctx;
  const dialect = res.locals.route
    ? res.locals.route.errorDialect
    : isOpenAiPath(res.req)
      ? 'openai'
      : undefined;
  const body = dialect === 'openai' ? openAiErrorBody(error, requestId) : errorBody(error, requestId);
  // Set, not left to res.json(): a handler may have named its own type before failing (a page's
  // text/html), and res.json() keeps a Content-Type already set.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.status(httpStatus).json(body);
}

/**
 * 416 for a `Range` that selects no byte of a file of `size` bytes. `Content-Range` carries the
 * size (RFC 9110 §14.4), so the client learns what it could have asked, and the body is the usual
 * JSON error, so clients that parse every error body find one here too.
 */
export function sendRangeNotSatisfiable(res: Response, size: number): void {
  res.setHeader('Content-Range', `bytes */${size}`);
  res.setHeader('Accept-Ranges', 'bytes');
  sendError(
    res,
    new SwitchboardError('invalid_request', {
      message: `The requested range is not satisfiable: the file is ${size} bytes long.`,
    }),
    416,
  );
}

/** Errors thrown by Express itself or its body parsers, translated to our codes. */
function fromExpressError(error: unknown): SwitchboardError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, status } = error as { type?: string; status?: number };
  switch (type) {
    case 'entity.parse.failed':
      return new SwitchboardError('invalid_json');
    case 'entity.too.large':
      return new SwitchboardError('payload_too_large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new SwitchboardError('unsupported_media_type');
    default:
      break;
  }
  if (status === 413) return new SwitchboardError('payload_too_large');
  if (status === 400) return new SwitchboardError('invalid_request');
  return undefined;
}

export const notFound: RequestHandler = (_req, res) => {
  sendError(res, new SwitchboardError('not_found', { message: 'No such route.' }));
};

/**
 * Answers that mean a part of the cluster failed the call (a worker or store out of reach, a
 * deadline passed): an operator needs their cause, which the client is not shown. Capacity
 * answers (`no_capacity`, `model_loading`) are load, and a tenant's page that fails is theirs.
 */
const CLUSTER_FAULTS: ReadonlySet<ErrorCode> = new Set([
  'unavailable',
  'upstream_failed',
  'upstream_timeout',
  'internal',
]);

/** Last in the chain: anything thrown becomes our JSON shape; the stack stays in the log. */
export const errorHandler: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  const known = isSwitchboardError(error) ? error : fromExpressError(error);
  const { logger } = res.locals.ctx;
  if (known && CLUSTER_FAULTS.has(known.code)) {
    logger.warn(
      { code: known.code, err: known.cause instanceof Error ? known.cause : known },
      'request failed',
    );
  } else if (known) {
    logger.debug({ code: known.code }, 'request failed');
  } else {
    logger.error({ err: error }, 'unhandled error');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendError(res, known ?? new SwitchboardError('internal'));
};
