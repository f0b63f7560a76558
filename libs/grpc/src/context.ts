import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Metadata, ServerUnaryCall, StatusObject } from '@grpc/grpc-js';
import { SwitchboardError, errorTable, toGrpcStatus } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { metadataKeys, readMetadata } from './metadata.js';

/** What every handler gets besides its request. */
export interface RequestContext {
  /** The gateway's request id (one is made up when a caller sent none, so logs still join). */
  readonly requestId: string;
  /** The caller's API key id, trusted (set by the gateway); undefined for the gateway's own calls. */
  readonly keyId: string | undefined;
  /** A child logger carrying request_id, key_id and rpc. */
  readonly logger: Logger;
  /** Aborts when the caller cancels the call, its deadline passes, or the server is forced down. */
  readonly signal: AbortSignal;
  readonly metadata: Metadata;
}

/** What every kind of server call has (grpc-js does not export its ServerSurfaceCall). */
type Call = Pick<ServerUnaryCall<unknown, unknown>, 'metadata' | 'getPath' | 'cancelled'> & EventEmitter;

/**
 * How many calls a server's handlers have taken and not yet answered: what a draining replica
 * still owes, and what an operator scales on.
 */
export class OpenCalls {
  count = 0;
}

export interface CallScope {
  ctx: RequestContext;
  /** Logs the outcome and returns the status to fail with; undefined when nobody is listening. */
  fail(error: unknown): (Partial<StatusObject> & { code: number }) | undefined;
  /** Logs success at debug, with the duration. */
  done(): void;
}

/** gRPC statuses that mean "the worker could not", as opposed to "the request was wrong". */
const serverSideStatuses = new Set<number>([
  errorTable.internal.grpc,
  errorTable.unavailable.grpc,
  errorTable.upstream_failed.grpc,
  errorTable.upstream_timeout.grpc,
]);

export function openCallScope(call: Call, base: Logger, open: OpenCalls, onCancel?: () => void): CallScope {
  const started = performance.now();
  open.count += 1;
  const requestId = readMetadata(call.metadata, metadataKeys.requestId) ?? randomUUID();
  const keyId = readMetadata(call.metadata, metadataKeys.keyId);
  const rpc = call.getPath();
  const logger = base.child({ request_id: requestId, key_id: keyId, rpc });
  const controller = new AbortController();
  const cancel = () => {
    if (controller.signal.aborted) return;
    controller.abort();
    onCancel?.();
  };
  // grpc-js emits 'cancelled' whenever the stream closes, even after a normal end: stop listening
  // once the handler has answered, so the signal means "the caller gave up" and nothing else.
  let settled = false;
  const settle = () => {
    call.off('cancelled', cancel);
    if (settled) return;
    settled = true;
    open.count -= 1;
  };
  if (call.cancelled) cancel();
  else call.once('cancelled', cancel);

  return {
    ctx: { requestId, keyId, logger, signal: controller.signal, metadata: call.metadata },
    fail(error) {
      settle();
      const ms = Math.round(performance.now() - started);
      if (controller.signal.aborted) {
        // The caller is gone: whatever the handler threw while stopping is not a failure.
        logger.info({ ms }, 'rpc cancelled');
        return undefined;
      }
      if (error instanceof SwitchboardError && error.code !== 'internal') {
        const level = serverSideStatuses.has(errorTable[error.code].grpc) ? 'warn' : 'info';
        logger[level]({ ms, code: error.code, param: error.param }, 'rpc failed');
      } else {
        // Unexpected: the stack goes to the log, the caller gets only "internal".
        logger.error({ ms, err: error }, 'rpc failed unexpectedly');
      }
      return toGrpcStatus(error);
    },
    done() {
      settle();
      logger.debug({ ms: Math.round(performance.now() - started) }, 'rpc done');
    },
  };
}
