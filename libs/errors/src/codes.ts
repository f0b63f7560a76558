import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The one table of stable error codes (docs/api.md#errors). Every error the cluster returns is made
 * from a row here; the HTTP status follows from the gRPC status through `httpStatusForGrpc`, so the
 * two can never disagree. Codes are part of the public contract: never rename one.
 */
export const errorTable = {
  invalid_request: { grpc: GrpcStatus.INVALID_ARGUMENT, message: 'The request is invalid.' },
  invalid_json: { grpc: GrpcStatus.INVALID_ARGUMENT, message: 'The request body is not valid JSON.' },
  invalid_audio: {
    grpc: GrpcStatus.INVALID_ARGUMENT,
    message: 'The upload is not audio the decoder can read.',
  },
  element_not_found: { grpc: GrpcStatus.INVALID_ARGUMENT, message: 'No element matches the selector.' },
  url_not_allowed: { grpc: GrpcStatus.INVALID_ARGUMENT, message: 'This URL may not be opened.' },
  unknown_model: { grpc: GrpcStatus.INVALID_ARGUMENT, message: 'No such model.' },
  unauthorized: { grpc: GrpcStatus.UNAUTHENTICATED, message: 'A valid API key is required.' },
  ip_not_allowed: {
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: 'Requests from this address are not allowed.',
  },
  tier_required: {
    grpc: GrpcStatus.PERMISSION_DENIED,
    message: "This endpoint needs a higher tier than the key's.",
  },
  not_found: { grpc: GrpcStatus.NOT_FOUND, message: 'Not found.' },
  session_not_found: { grpc: GrpcStatus.NOT_FOUND, message: 'No such browser session.' },
  job_not_found: { grpc: GrpcStatus.NOT_FOUND, message: 'No such job.' },
  session_closed: {
    grpc: GrpcStatus.FAILED_PRECONDITION,
    http: 410,
    message: 'The browser session is closed.',
  },
  session_expired: {
    grpc: GrpcStatus.FAILED_PRECONDITION,
    http: 410,
    message: 'The browser session has expired.',
  },
  job_finished: {
    grpc: GrpcStatus.FAILED_PRECONDITION,
    http: 409,
    message: 'The job has already finished.',
  },
  idempotency_key_reused: {
    grpc: GrpcStatus.FAILED_PRECONDITION,
    http: 422,
    message: 'This Idempotency-Key was already used with a different request.',
  },
  payload_too_large: {
    grpc: GrpcStatus.INVALID_ARGUMENT,
    http: 413,
    message: 'The request body is too large.',
  },
  unsupported_media_type: {
    grpc: GrpcStatus.INVALID_ARGUMENT,
    http: 415,
    message: 'Unsupported content type.',
  },
  rate_limited: { grpc: GrpcStatus.RESOURCE_EXHAUSTED, message: 'Rate limit exceeded.' },
  session_limit: {
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: "The key's tier allows no more browser sessions at once.",
  },
  job_limit: {
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: "The key's tier allows no more animation jobs at once.",
  },
  quota_exceeded: {
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: "The key's usage quota for this period is spent.",
  },
  concurrency_limit: {
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    message: "The key's tier allows no more calls to this model at once.",
  },
  internal: { grpc: GrpcStatus.INTERNAL, message: 'Internal error.' },
  navigation_failed: { grpc: GrpcStatus.UNKNOWN, http: 502, message: 'The page could not be loaded.' },
  upstream_failed: { grpc: GrpcStatus.UNKNOWN, http: 502, message: 'An upstream service failed.' },
  model_loading: { grpc: GrpcStatus.UNAVAILABLE, message: 'The model is still loading.' },
  unavailable: { grpc: GrpcStatus.UNAVAILABLE, message: 'The service is unavailable.' },
  no_capacity: { grpc: GrpcStatus.UNAVAILABLE, message: 'No capacity is free right now.' },
  upstream_timeout: {
    grpc: GrpcStatus.DEADLINE_EXCEEDED,
    message: 'An upstream service did not answer in time.',
  },
} as const satisfies Record<string, { grpc: GrpcStatus; http?: number; message: string }>;

export type ErrorCode = keyof typeof errorTable;

export const errorCodes = Object.keys(errorTable) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorTable, value);
}

/**
 * gRPC → HTTP, the one place it is decided. A few codes need an HTTP status that no gRPC status
 * names (410, 413, 415, 502); their row carries it explicitly.
 */
export function httpStatusForGrpc(code: GrpcStatus): number {
  switch (code) {
    case GrpcStatus.INVALID_ARGUMENT:
      return 400;
    case GrpcStatus.UNAUTHENTICATED:
      return 401;
    case GrpcStatus.PERMISSION_DENIED:
      return 403;
    case GrpcStatus.NOT_FOUND:
      return 404;
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return 429;
    case GrpcStatus.UNAVAILABLE:
      return 503;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 504;
    default:
      return 500;
  }
}

export function httpStatusOf(code: ErrorCode): number {
  const row: { grpc: GrpcStatus; http?: number } = errorTable[code];
  return row.http ?? httpStatusForGrpc(row.grpc);
}

/** The code to report when a peer failed with a bare gRPC status and no code of ours. */
export function codeForGrpcStatus(code: GrpcStatus): ErrorCode {
  switch (code) {
    case GrpcStatus.INVALID_ARGUMENT:
      return 'invalid_request';
    case GrpcStatus.UNAUTHENTICATED:
      return 'unauthorized';
    case GrpcStatus.NOT_FOUND:
      return 'not_found';
    case GrpcStatus.UNAVAILABLE:
      return 'unavailable';
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 'upstream_timeout';
    default:
      return 'internal';
  }
}
