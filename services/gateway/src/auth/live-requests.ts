import type { Response } from 'express';

interface LiveRequest {
  /** False once the request's key no longer authenticates (revoked, deleted). */
  stillValid: () => boolean;
  /** How to end it gracefully; by default the connection is cut. */
  end?: () => void;
}

/**
 * Authenticated requests that stay open — SSE streams, DevTools sockets — with a way to re-check
 * their key. A sweep every `intervalMs` ends those whose key stopped authenticating, so revoking
 * a key closes what it has open within that interval of the revocation reaching this replica
 * (NATS delivers it in milliseconds), not when the client happens to finish. Short requests are
 * not tracked: they end on their own.
 */
export class LiveRequests {
  private readonly live = new Map<Response, LiveRequest>();
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 500) {
    this.timer = setInterval(() => this.sweep(), intervalMs);
    this.timer.unref();
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * Follows `res` until it closes. Once `stillValid` turns false, `end` ends it gracefully (an SSE
   * stream says why before it closes); without `end` the connection is cut.
   */
  track(res: Response, stillValid: () => boolean, end?: () => void): void {
    this.live.set(res, end ? { stillValid, end } : { stillValid });
    res.once('close', () => this.live.delete(res));
  }

  close(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    for (const [res, entry] of this.live) {
      if (entry.stillValid()) continue;
      this.live.delete(res);
      if (entry.end) entry.end();
      else res.destroy();
    }
  }
}
