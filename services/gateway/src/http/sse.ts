import type { Response } from 'express';

/**
 * A Server-Sent Events response: each event is written and flushed at once (no compression or
 * buffering in between), and an idle stream gets a `: ping` comment so proxies keep it open.
 */
export class SseStream {
  private readonly ping: NodeJS.Timeout;

  constructor(
    private readonly res: Response,
    pingIntervalMs = 15_000,
  ) {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    this.ping = setInterval(() => res.write(': ping\n\n'), pingIntervalMs);
    this.ping.unref();
    // A client gone before or during the stream must not leave a ping timer behind.
    res.once('close', () => this.stop());
    if (res.destroyed) this.stop();
  }

  private corked = false;

  /**
   * Events produced in the same tick (several tokens arriving in one read from the worker) leave
   * in one write; each still goes out before the event loop waits for more, so nothing is held.
   */
  send(data: unknown): void {
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => {
        this.corked = false;
        this.res.uncork();
      });
    }
    this.res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }

  /** Ends the stream the way every stream ends: with `data: [DONE]`. */
  end(): void {
    this.stop();
    this.send('[DONE]');
    this.res.end();
  }

  /** Stops the pings (the client went away). */
  stop(): void {
    clearInterval(this.ping);
  }
}
