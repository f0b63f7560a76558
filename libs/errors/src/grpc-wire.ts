import { Metadata, type ServiceError, type StatusObject, status as GrpcStatus } from '@grpc/grpc-js';
import { codeForGrpcStatus, errorTable, isErrorCode } from './codes.js';
import { SwitchboardError } from './error.js';

/** Trailer keys that carry our code across gRPC; workers never speak HTTP numbers. */
export const errorMetadataKeys = {
  code: 'sb-error-code',
  param: 'sb-error-param',
  retryAfter: 'sb-retry-after',
} as const;

/** What a gRPC handler passes to its callback (or emits on a stream) to fail with our code. */
export function toGrpcStatus(error: unknown): Partial<StatusObject> & { code: GrpcStatus } {
  const known =
    error instanceof SwitchboardError ? error : new SwitchboardError('internal', { cause: error });
  const metadata = new Metadata();
  metadata.set(errorMetadataKeys.code, known.code);
  if (known.param !== undefined) metadata.set(errorMetadataKeys.param, known.param);
  if (known.retryAfterSeconds !== undefined)
    metadata.set(errorMetadataKeys.retryAfter, String(known.retryAfterSeconds));
  // Internal errors keep their cause in the worker's log, not on the wire.
  const details = known.code === 'internal' ? errorTable.internal.message : known.message;
  return { code: errorTable[known.code].grpc, details, metadata };
}

function firstString(metadata: Metadata | undefined, key: string): string | undefined {
  const value = metadata?.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/** A failed call's status, read back into our error; bare statuses map through the one table. */
export function fromGrpcError(error: Partial<ServiceError> & { code?: GrpcStatus }): SwitchboardError {
  const grpcCode = error.code ?? GrpcStatus.UNKNOWN;
  const sent = firstString(error.metadata, errorMetadataKeys.code);
  if (isErrorCode(sent)) {
    const retryAfter = Number(firstString(error.metadata, errorMetadataKeys.retryAfter));
    return new SwitchboardError(sent, {
      message: sent === 'internal' ? undefined : error.details || undefined,
      param: firstString(error.metadata, errorMetadataKeys.param),
      retryAfterSeconds: Number.isFinite(retryAfter) ? retryAfter : undefined,
    });
  }
  // A peer that is down, or a call that ran out of time, is not something the caller did wrong.
  return new SwitchboardError(codeForGrpcStatus(grpcCode), {
    retryAfterSeconds: grpcCode === GrpcStatus.UNAVAILABLE ? 1 : undefined,
    cause: error,
  });
}
