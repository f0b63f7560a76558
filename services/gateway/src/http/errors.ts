import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { SwitchboardError, isSwitchboardError } from '@switchboard/errors';
import { isOpenAiPath, openAiErrorBody } from '../openai/errors.js';

/** The one JSON error shape of API.md §1. */
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

export function sendError(res: Response, error: SwitchboardError): void {
  // An error answered before the body was read (401, 403, 413, …): the connection is not reused.
  // The rest of the body is read and dropped, within bounds, before it closes (lingering-close.ts).
  if (!res.req.complete) res.setHeader('Connection', 'close');
  if (error.retryAfterSeconds !== undefined)
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  // Under /v1 the same error, from the same table, in OpenAI's body (its clients parse that one).
  const body = isOpenAiPath(res.req) ? openAiErrorBody(error) : errorBody(error, res.locals.ctx.requestId);
  res.status(error.httpStatus).json(body);
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

/** Last in the chain: anything thrown becomes our JSON shape; the stack stays in the log. */
export const errorHandler: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  const known = isSwitchboardError(error) ? error : fromExpressError(error);
  const { logger } = res.locals.ctx;
  if (known) {
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
