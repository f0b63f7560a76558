import {
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientOptions as GrpcClientOptions,
  type ClientUnaryCall,
  type Interceptor,
  InterceptingCall,
  Metadata,
  status as GrpcStatus,
  type requestCallback,
} from '@grpc/grpc-js';
import { fromGrpcError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { clientKeepalive, retryServiceConfig } from './channel-options.js';
import { clusterSecretInterceptor } from './cluster-auth.js';
import { type ClientTransport, plaintextTransport } from './tls.js';

export type ClientConstructor<C extends Client> = new (
  address: string,
  credentials: ChannelCredentials,
  options?: GrpcClientOptions,
) => C;

export interface CreateClientOptions {
  /** Applied to every call that does not bring its own `deadline` (pass Infinity for none). */
  deadlineMs: number;
  /** Gets a warn line per call that fails with UNAVAILABLE or DEADLINE_EXCEEDED (after retries). */
  logger?: Logger;
  /**
   * Attempts for UNAVAILABLE, first included. Default 3. With 1, grpc-js still sends a call again
   * that never reached the server's handlers (transparent retry): one whose stream could not start
   * on a connection the server had just closed with GOAWAY, always; one the server refused, once.
   */
  maxAttempts?: number;
  channelOptions?: ChannelOptions;
  /** Sent as CLUSTER_SECRET_KEY metadata on every call: workers refuse calls without it. */
  clusterSecret?: string;
  /** TLS credentials (clientTransport(), made once per process); default plaintext. */
  transport?: ClientTransport | undefined;
}

/**
 * A client for one worker address: keepalive, a default deadline, retries for UNAVAILABLE only,
 * and no waitForReady, so a worker that is down fails fast (UNAVAILABLE → 503) instead of queueing.
 */
export function createClient<C extends Client>(
  Ctor: ClientConstructor<C>,
  address: string,
  options: CreateClientOptions,
): C {
  const interceptors: Interceptor[] = [defaultDeadline(options.deadlineMs)];
  if (options.logger) interceptors.push(logTransportFailures(options.logger, address));
  if (options.clusterSecret !== undefined) interceptors.push(clusterSecretInterceptor(options.clusterSecret));
  // grpc-js retry policies need at least two attempts; one attempt means no retry policy, which
  // leaves grpc-js's transparent retries. Those must stay: a server closing a connection (its age,
  // a drain) refuses the streams that cross its GOAWAY, and a stream started as it lands fails to
  // start (INTERNAL); neither reached a handler, and neither is an answer for the caller.
  const retries =
    (options.maxAttempts ?? 3) > 1
      ? { 'grpc.enable_retries': 1, 'grpc.service_config': retryServiceConfig(options.maxAttempts) }
      : {};
  const transport = options.transport ?? plaintextTransport;
  return new Ctor(address, transport.credentials, {
    ...clientKeepalive,
    ...retries,
    // Reconnect quickly after a worker restart; grpc-js's default backoff starts at 1 s.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 5_000,
    ...transport.channelOptions,
    ...options.channelOptions,
    interceptors,
  });
}

/** Outermost interceptor: the whole call, retries included, lives within one deadline. */
function defaultDeadline(deadlineMs: number): Interceptor {
  return (callOptions, nextCall) =>
    new InterceptingCall(
      nextCall(
        callOptions.deadline === undefined
          ? { ...callOptions, deadline: Date.now() + deadlineMs }
          : callOptions,
      ),
    );
}

function logTransportFailures(logger: Logger, address: string): Interceptor {
  return (callOptions, nextCall) =>
    new InterceptingCall(nextCall(callOptions), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            if (status.code === GrpcStatus.UNAVAILABLE || status.code === GrpcStatus.DEADLINE_EXCEEDED) {
              logger.warn(
                { address, method: callOptions.method_definition.path, grpc_status: status.code },
                'grpc call failed',
              );
            }
            nextStatus(status);
          },
        });
      },
    });
}

/**
 * A generated client's unary method (all four overloads, as proto-loader-gen-types writes them),
 * so `unary(client.Complete.bind(client), …)` infers request and response types.
 */
export interface UnaryMethod<Req, Res> {
  (argument: Req, metadata: Metadata, options: CallOptions, callback: requestCallback<Res>): ClientUnaryCall;
  (argument: Req, metadata: Metadata, callback: requestCallback<Res>): ClientUnaryCall;
  (argument: Req, options: CallOptions, callback: requestCallback<Res>): ClientUnaryCall;
  (argument: Req, callback: requestCallback<Res>): ClientUnaryCall;
}

export interface UnaryOptions extends CallOptions {
  /** Cancels the call (the worker's ctx.signal aborts), e.g. when the HTTP client went away. */
  signal?: AbortSignal;
}

/** A unary call as a promise; any failure is a SwitchboardError read back with fromGrpcError. */
export function unary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  request: Req,
  metadata: Metadata = new Metadata(),
  options: UnaryOptions = {},
): Promise<Res> {
  const { signal, ...callOptions } = options;
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) {
      reject(
        fromGrpcError({
          code: GrpcStatus.CANCELLED,
          details: 'cancelled before start',
          metadata: new Metadata(),
        }),
      );
      return;
    }
    const call = method(request, metadata, callOptions, (error, response) => {
      signal?.removeEventListener('abort', cancel);
      if (error) reject(fromGrpcError(error));
      else if (response === undefined)
        reject(
          fromGrpcError({ code: GrpcStatus.INTERNAL, details: 'empty response', metadata: new Metadata() }),
        );
      else resolve(response);
    });
    const cancel = () => call.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
  });
}
