import type { ClientWritableStream, ServiceError } from '@grpc/grpc-js';
import { SwitchboardError, fromGrpcError } from '@switchboard/errors';

/**
 * The sending side of a client-streaming call with backpressure: `send` resolves once the message
 * is accepted (or buffered under the high-water mark) and rejects as soon as the call has failed.
 */
export class StreamSender<Req, Res> {
  private failure: SwitchboardError | undefined;
  private cancelled = false;
  readonly response: Promise<Res>;

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
  }

  async send(message: Req): Promise<void> {
    if (this.failure) throw this.failure;
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
