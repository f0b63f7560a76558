import type { Logger } from '@switchboard/telemetry';
import { readProcessTable, treeMemoryBytes } from '../chromium/process-memory.js';

/** How often every session's browser is measured. A page allocating faster than the limit per
 * interval can briefly pass it; the renderer heap limit stops JavaScript heaps earlier. */
export const MEMORY_POLL_INTERVAL_MS = 500;

export interface WatchedBrowser {
  sessionId: string;
  /** The browser process; its whole process tree is counted. */
  pid: number;
}

export interface MemoryWatchOptions {
  limitBytes: number;
  /** The browsers of active sessions, asked anew on every round. */
  browsers: () => WatchedBrowser[];
  /** A session whose browser passed the limit; the watch reports it once per round it is over. */
  onOverLimit: (sessionId: string, usedBytes: number) => void;
  logger: Logger;
  intervalMs?: number;
}

/**
 * The per-session memory bound (`BROWSER_SESSION_MEMORY_MB`): measures each session's Chromium
 * process tree from /proc (process-memory.ts) and reports the sessions over the limit, so that
 * one page ends its own session, not the pod's memory for all of them. Polling, because pods may
 * not get a cgroup per browser.
 */
export class MemoryWatch {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly o: MemoryWatchOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.o.intervalMs ?? MEMORY_POLL_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One measurement of every watched browser; a round still running makes the next one skip. */
  async round(): Promise<void> {
    const browsers = this.o.browsers();
    if (browsers.length === 0 || this.running) return;
    this.running = true;
    try {
      const table = await readProcessTable();
      const used = await Promise.all(browsers.map((b) => treeMemoryBytes(b.pid, table)));
      browsers.forEach((browser, i) => {
        if (used[i]! > this.o.limitBytes) this.o.onOverLimit(browser.sessionId, used[i]!);
      });
    } catch (error) {
      this.o.logger.warn({ err: error }, 'session memory not measured');
    } finally {
      this.running = false;
    }
  }
}
