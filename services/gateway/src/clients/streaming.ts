import type { ClientWritableStream, ServiceError } from '@grpc/grpc-js';
import { SwitchboardError, fromGrpcError } from '@switchboard/errors';

/**
 * The sending side of a client-streaming call with backpressure: `send` resolves once the message
 * is accepted (or buffered under the high-water mark) and rejects as soon as the call has failed.
 *
 * Nothing is sent before the worker has taken the call (its response headers, which a handler
 * sends at once). Until then the stream may be refused without reaching a handler: a server
 * closing its connection (connection age, shutdown) refuses the streams that cross its GOAWAY.
 * grpc-js sends a refused call again on a new connection only while what it has sent fits its
 * per-call retry buffer (256 KiB), which an upload's bytes soon pass; with nothing sent, it always
 * can. The wait costs one round trip per call.
 */
export class StreamSender<Req, Res> {
  private failure: SwitchboardError | undefined;
  private cancelled = false;
  readonly response: Promise<Res>;
  /** Resolves once the worker's headers have come: the call reached a handler. */
  private readonly accepted: Promise<unknown>;

  constructor(
    private readonly call: ClientWritableStream<Req>,
    response: Promise<Res>,
  ) {
    this.response = response.catch((error: unknown) => {
      this.failure = error instanceof SwitchboardError ? error : fromGrpcError(error as ServiceError);
      throw this.failure;
    });
    // Failures are also observed through send()/finish(); never leave this one unhandled.
    this.response.catch(() => undefined);
    this.accepted = new Promise((resolve) => call.once('metadata', resolve));
  }

  async send(message: Req): Promise<void> {
    if (this.failure) throw this.failure;
    // A call that fails before it is taken rejects here, through the response (unless cancelled).
    await Promise.race([this.accepted, this.response]).catch((error: unknown) => {
      if (!this.cancelled) throw error;
    });
    // Nothing more goes out once cancelled: the bytes would only feed a call nobody waits for.
    if (this.cancelled) return;
    if (this.call.write(message)) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        this.call.off('drain', done);
        resolve();
      };
      this.call.on('drain', done);
      this.response.catch(reject);
    });
  }

  /** Ends the upload and waits for the worker's answer. */
  finish(): Promise<Res> {
    this.call.end();
    return this.response;
  }

  /**
   * Cancels the call. A cancel that comes before the call has reached the worker can be lost
   * (the worker then waits for the rest of the upload), so callers cancel again once their last
   * send has settled.
   */
  cancel(): void {
    this.cancelled = true;
    this.call.cancel();
  }
}
