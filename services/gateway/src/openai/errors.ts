import type { Request } from 'express';
import { httpStatusOf, type SwitchboardError } from '@switchboard/errors';

/** Under /v1 OpenAI's clients are asking: how a request no route matched is answered. */
export function isOpenAiPath(req: Request): boolean {
  const path = req.originalUrl.split('?', 1)[0] ?? '';
  return path === '/v1' || path.startsWith('/v1/');
}

/**
 * OpenAI's `type`, which its clients read only loosely: the class of the failure, by status.
 * The precise reason stays our stable code, in `code`.
 */
export function openAiErrorType(httpStatus: number): string {
  if (httpStatus === 401) return 'authentication_error';
  if (httpStatus === 403) return 'permission_error';
  if (httpStatus === 404) return 'not_found_error';
  if (httpStatus === 429) return 'rate_limit_error';
  if (httpStatus >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * The error body of OpenAI's API (`{"error": {message, type, param, code}}`) made from a row of
 * the one error table: same status, same code. The request id rides along as one more field of
 * the error object (as in the rest of the API), which OpenAI's clients ignore but logs and
 * support requests can quote; it is also in `X-Request-Id`.
 */
export function openAiErrorBody(error: SwitchboardError, requestId: string) {
  return {
    error: {
      message: error.message,
      type: openAiErrorType(httpStatusOf(error.code)),
      param: error.param ?? null,
      code: error.code,
      request_id: requestId,
    },
  };
}
