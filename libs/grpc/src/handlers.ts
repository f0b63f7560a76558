import { once } from 'node:events';
import {
  Metadata,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedHandleCall,
  type handleClientStreamingCall,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import type { Logger } from '@switchboard/telemetry';
import { openCallScope, type OpenCalls, type RequestContext } from './context.js';

/** `async (request, ctx) => response` */
export type UnaryHandler<Req, Res> = (request: Req, ctx: RequestContext) => Promise<Res>;
/**
 * An async generator: `async function* (request, ctx) { yield chunk }`. Each yield waits for the
 * transport to take the message (backpressure); cancellation stops the loop at the next yield and
 * aborts ctx.signal, which long steps (a model's decode loop) must watch themselves.
 */
export type ServerStreamHandler<Req, Res> = (request: Req, ctx: RequestContext) => AsyncIterable<Res>;
/** `async (requests, ctx) => response`, reading the caller's messages with `for await`. */
export type ClientStreamHandler<Req, Res> = (
  requests: AsyncIterable<Req>,
  ctx: RequestContext,
) => Promise<Res>;

/** The context-style handler for a grpc-js handler type, picked by the shape of its call. */
export type ContextHandler<H> = H extends (call: ServerDuplexStream<infer _Req, infer _Res>) => void
  ? never // bidirectional streaming: no proto uses it yet
  : H extends (call: ServerWritableStream<infer Req, infer Res>) => void
    ? ServerStreamHandler<Req, Res>
    : H extends (
          call: ServerReadableStream<infer Req, infer _Res>,
          callback: sendUnaryData<infer Res>,
        ) => void
      ? ClientStreamHandler<Req, Res>
      : H extends (call: ServerUnaryCall<infer Req, infer _Res>, callback: sendUnaryData<infer Res>) => void
        ? UnaryHandler<Req, Res>
        : never;

/**
 * A service implemented with context-style handlers, from its generated Handlers type:
 * `ContextImplementation<LlmHandlers>` has Complete, StreamComplete and ListModels.
 */
export type ContextImplementation<H> = {
  [M in keyof H as string extends M ? never : M]: ContextHandler<H[M]>;
};

/**
 * Sends the response headers as soon as a handler takes the call. A client then knows its request
 * reached a handler: an UNAVAILABLE before any headers (refused, a draining server's GOAWAY) is
 * safe to send to another replica, one after them is not, since the work may have run.
 */
function accept(call: { sendMetadata(metadata: Metadata): void }): void {
  call.sendMetadata(new Metadata());
}

export function wrapUnary<Req, Res>(
  fn: UnaryHandler<Req, Res>,
  base: Logger,
  open: OpenCalls,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const scope = openCallScope(call, base, open);
    accept(call);
    run(() => fn(call.request, scope.ctx)).then(
      (response) => {
        scope.done();
        callback(null, response);
      },
      (error: unknown) => {
        const status = scope.fail(error);
        if (status) callback(status);
      },
    );
  };
}

export function wrapServerStream<Req, Res>(
  fn: ServerStreamHandler<Req, Res>,
  base: Logger,
  open: OpenCalls,
): handleServerStreamingCall<Req, Res> {
  return (call) => {
    const scope = openCallScope(call, base, open);
    accept(call);
    const { signal } = scope.ctx;
    run(async () => {
      for await (const message of fn(call.request, scope.ctx)) {
        if (signal.aborted) break;
        // once(…, { signal }) rejects when the call is cancelled while we wait for the transport.
        if (!call.write(message)) await once(call, 'drain', { signal });
      }
    }).then(
      () => {
        if (signal.aborted) {
          scope.fail(undefined); // only logs "rpc cancelled": there is nobody to answer
          return;
        }
        scope.done();
        call.end();
      },
      (error: unknown) => {
        const status = scope.fail(error);
        // Messages already written are flushed first, then the status goes out as the trailer.
        if (status) call.emit('error', status);
      },
    );
  };
}

export function wrapClientStream<Req, Res>(
  fn: ClientStreamHandler<Req, Res>,
  base: Logger,
  open: OpenCalls,
): handleClientStreamingCall<Req, Res> {
  return (call, callback) => {
    // A cancel that comes while the handler waits for a message: destroying the stream makes its
    // `for await` throw instead of waiting forever.
    const scope = openCallScope(call, base, open, () => call.destroy());
    accept(call);
    run(() => fn(requests<Req>(call, scope.ctx.signal), scope.ctx)).then(
      (response) => {
        scope.done();
        callback(null, response);
      },
      (error: unknown) => {
        const status = scope.fail(error);
        if (status) callback(status);
      },
    );
  };
}

/**
 * The caller's messages. A cancelled upload also *ends* the stream (Node's http2 pushes EOF on
 * RST_STREAM) and grpc-js reports the cancel only a few ticks later, so before saying "that was
 * all" we let those ticks run: a truncated upload must never pass for a complete one.
 */
async function* requests<Req>(call: AsyncIterable<unknown>, signal: AbortSignal): AsyncIterable<Req> {
  for await (const message of call) yield message as Req;
  await new Promise((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}

/** Turns a synchronous throw into a rejection, so every failure takes the same path. */
async function run<T>(fn: () => Promise<T> | T): Promise<T> {
  return await fn();
}

/**
 * Wraps a context-style implementation into grpc-js handlers, using each method's streaming flags
 * from the service definition (so the wrapper cannot disagree with the wire).
 */
export function wrapImplementation(
  definition: Record<string, { requestStream: boolean; responseStream: boolean; path: string }>,
  implementation: Record<string, unknown>,
  base: Logger,
  open: OpenCalls,
): Record<string, UntypedHandleCall> {
  const out: Record<string, UntypedHandleCall> = {};
  for (const [method, { requestStream, responseStream, path }] of Object.entries(definition)) {
    const fn = implementation[method];
    if (typeof fn !== 'function') throw new Error(`no handler for ${path}`);
    if (requestStream && responseStream) throw new Error(`${path}: bidirectional streaming is not supported`);
    out[method] = requestStream
      ? wrapClientStream(fn as ClientStreamHandler<unknown, unknown>, base, open)
      : responseStream
        ? wrapServerStream(fn as ServerStreamHandler<unknown, unknown>, base, open)
        : wrapUnary(fn as UnaryHandler<unknown, unknown>, base, open);
  }
  return out;
}
