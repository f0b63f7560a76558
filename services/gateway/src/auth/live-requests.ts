import type { Response } from 'express';
import type { SwitchboardError } from '@switchboard/errors';

/** A request's access as of now: undefined while it may go on, else why it must end. */
export type AccessRecheck = () => SwitchboardError | undefined;

/** How an open request ends once its access is gone, saying why where its protocol can. */
export type EndWithReason = (reason: SwitchboardError) => void;

interface LiveRequest {
  recheck: AccessRecheck;
  end?: EndWithReason;
}

/**
 * Authenticated requests that stay open — SSE streams, DevTools sockets, and any live view to come
 * — held to the same rule as a new request. A sweep every `intervalMs` re-runs each one's access
 * check (auth/access.ts, the check new requests pass) and ends those that would now be refused:
 * the key revoked, rotated away or deleted; the key store silent past KEYS_MAX_STALENESS_MS; the
 * client's address no longer in the key's or the cluster's allowlist. So what a key has open ends
 * within that interval of the change reaching this replica, not when the client happens to
 * finish. Short requests are not tracked: they end on their own.
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
   * Follows `res` until it closes. Once `recheck` gives a reason, `end` ends it with that reason
   * (an SSE stream sends it as an error event, a socket a close frame); without `end` the
   * connection is cut.
   */
  track(res: Response, recheck: AccessRecheck, end?: EndWithReason): void {
    this.live.set(res, end ? { recheck, end } : { recheck });
    res.once('close', () => this.live.delete(res));
  }

  close(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    for (const [res, entry] of this.live) {
      const reason = entry.recheck();
      if (reason === undefined) continue;
      this.live.delete(res);
      try {
        if (entry.end) entry.end(reason);
        else res.destroy();
      } catch {
        // Ending politely failed (the socket broke meanwhile): it must end all the same.
        res.destroy();
      }
    }
  }
}
