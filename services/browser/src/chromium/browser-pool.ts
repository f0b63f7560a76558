import type { Logger } from '@switchboard/telemetry';
import type { PooledBrowser } from './pooled-browser.js';

export interface PoolOptions {
  /** Browsers kept launched and connected, waiting for a session. */
  size: number;
  /** Browser processes this worker may run in all (warm + in sessions). */
  maxBrowsers: number;
  /** Browsers currently held by sessions. */
  inUse: () => number;
  launch: () => Promise<PooledBrowser>;
  logger: Logger;
  /** Called whenever the number of warm browsers changes (metrics, registry heartbeat). */
  onChange?: () => void;
}

const RETRY_AFTER_FAILURE_MS = 2_000;
/**
 * A launch takes most of a CPU core for half a second. When a warm browser is still left, the
 * refill waits this long, so the new session's first navigate and capture do not compete with it.
 */
const DEFERRED_REFILL_MS = 1_500;

/** No browser became warm in time: Chromium does not start here (its launch errors are logged). */
export class NoWarmBrowserError extends Error {
  constructor(timeoutMs: number) {
    super(
      `No browser started within ${timeoutMs / 1000} s, so the worker does not serve; the log says why each launch failed.`,
    );
  }
}

interface WarmWaiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Pre-launched browsers. take() hands out a warm one at once when there is one, else launches
 * one on demand; either way the pool refills in the background, never past the worker's cap.
 */
export class BrowserPool {
  private readonly warm: PooledBrowser[] = [];
  private launching = 0;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly warmWaiters = new Set<WarmWaiter>();

  constructor(private readonly options: PoolOptions) {}

  get warmCount(): number {
    return this.warm.length;
  }

  /**
   * Resolves once a browser is warm (at once if one is already). Rejects with NoWarmBrowserError
   * after `timeoutMs`, so a Chromium that never starts fails the worker's start-up instead of
   * holding it for ever, and with an Error if the pool closes first.
   */
  whenWarm(timeoutMs: number): Promise<void> {
    if (this.warm.length > 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new Error('the browser pool is closed'));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => settle(() => reject(new NoWarmBrowserError(timeoutMs))), timeoutMs);
      const settle = (outcome: () => void) => {
        clearTimeout(timer);
        this.warmWaiters.delete(waiter);
        outcome();
      };
      const waiter: WarmWaiter = {
        resolve: () => settle(resolve),
        reject: (error) => settle(() => reject(error)),
      };
      this.warmWaiters.add(waiter);
    });
  }

  /** Room for one more browser, counting sessions, warm ones and launches under way. */
  hasRoom(): boolean {
    return this.options.inUse() + this.warm.length + this.launching < this.options.maxBrowsers;
  }

  /** A connected browser for a new session; the caller owns it from here. */
  async take(): Promise<PooledBrowser> {
    let browser = this.warm.shift();
    while (browser && !browser.isAlive) browser = this.warm.shift();
    if (browser) {
      this.options.onChange?.();
      if (this.warm.length > 0) this.fillLater();
      else this.fill();
      return browser;
    }
    this.launching++;
    try {
      return await this.options.launch();
    } finally {
      this.launching--;
      this.fill();
    }
  }

  /** Starts launches until the pool is full (or the worker's cap is reached). */
  fill(): void {
    if (this.closed || this.retryTimer) return;
    while (this.warm.length + this.launching < this.options.size && this.hasRoom()) {
      this.launching++;
      const launch = this.launchOne().finally(() => this.inFlight.delete(launch));
      this.inFlight.add(launch);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of [...this.warmWaiters]) waiter.reject(new Error('the browser pool is closed'));
    clearTimeout(this.retryTimer);
    clearTimeout(this.refillTimer);
    // A launch under way finishes into a closed pool and disposes of its browser; wait for that,
    // or its profile directory would outlive the worker.
    await Promise.all(this.inFlight);
    const browsers = this.warm.splice(0);
    await Promise.all(browsers.map((b) => b.dispose()));
  }

  private fillLater(): void {
    this.refillTimer ??= setTimeout(() => {
      this.refillTimer = undefined;
      this.fill();
    }, DEFERRED_REFILL_MS);
  }

  private async launchOne(): Promise<void> {
    let browser: PooledBrowser;
    try {
      browser = await this.options.launch();
    } catch (error) {
      this.launching--;
      this.options.logger.error({ err: error }, 'browser launch failed');
      // Back off instead of spinning on a broken Chromium; take() still launches on demand.
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        this.fill();
      }, RETRY_AFTER_FAILURE_MS);
      return;
    }
    this.launching--;
    if (this.closed) {
      await browser.dispose();
      return;
    }
    this.warm.push(browser);
    for (const waiter of [...this.warmWaiters]) waiter.resolve();
    // A warm browser that crashes leaves the pool and is replaced.
    void browser.exited.then(() => {
      const index = this.warm.indexOf(browser);
      if (index >= 0) {
        this.warm.splice(index, 1);
        void browser.dispose();
        this.options.onChange?.();
        this.fill();
      }
    });
    this.options.onChange?.();
  }
}
