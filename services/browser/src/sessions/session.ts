import type { Session__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { captureFileName, pdfFileName } from '@switchboard/objectstore';
import type { PooledBrowser } from '../chromium/pooled-browser.js';
import type { GuardWatch } from './page-actions.js';

export type SessionStatus = 'active' | 'closed' | 'expired';

/** Why a session ended, as `details` reports it (`end_reason`) and its ended event carries it. */
export type EndReason =
  | 'closed' // its owner's (or an admin's) close
  | 'expired' // idle for BROWSER_IDLE_TIMEOUT_MS
  | 'memory_limit' // its browser passed BROWSER_SESSION_MEMORY_MB
  | 'page_crashed' // a page's renderer crashed (one over BROWSER_RENDERER_HEAP_MB does)
  | 'browser_exited' // the browser process ended by itself (a DevTools client's Browser.close)
  | 'shutdown'; // its worker stopped

/**
 * One browser session: its Chromium while active, and what `details` reports for the hour after.
 * Actions on one session run one at a time (a navigate and a capture racing on one page would
 * make both answers meaningless), and the idle clock never runs out under a running action.
 */
export class BrowserSession implements GuardWatch {
  status: SessionStatus = 'active';
  readonly history: string[] = [];
  readonly screenshots: string[] = [];
  readonly pdfs: string[] = [];
  lastActivity = Date.now();
  endedAt: number | undefined;
  endReason: EndReason | undefined;
  /** API calls run so far (a live view follows the tab they work in). */
  actionCount = 0;
  private running = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private lastCaptureMs = 0;
  private blockedCount = 0;
  private devtoolsConnections = 0;

  constructor(
    readonly id: string,
    readonly ownerKeyId: string,
    readonly createdAt: Date,
    public browser: PooledBrowser | undefined,
  ) {
    if (browser) this.watch(browser);
  }

  get isBusy(): boolean {
    return this.running > 0;
  }

  touch(): void {
    this.lastActivity = Date.now();
  }

  /** Runs `action` after the session's earlier actions; 410 once the session has ended. */
  run<T>(action: (browser: PooledBrowser) => Promise<T>): Promise<T> {
    this.assertActive();
    this.running++;
    this.actionCount++;
    this.touch();
    const result = this.queue.then(() => {
      this.assertActive(); // it may have ended while this call waited its turn
      return action(this.browser!);
    });
    this.queue = result.catch(() => undefined);
    return result.finally(() => {
      this.running--;
      this.touch();
    });
  }

  assertActive(): void {
    if (this.status === 'closed') throw sessionClosed(this.endReason);
    if (this.status === 'expired') throw new SwitchboardError('session_expired');
  }

  /**
   * Takes one of the session's `max` DevTools connections until the returned function gives it
   * back (once). Counted here, in the worker that owns the browser, so the bound holds however
   * many gateway replicas the sockets came through.
   */
  takeDevtoolsConnection(max: number): () => void {
    if (this.devtoolsConnections >= max) {
      throw new SwitchboardError('rate_limited', {
        message: `This session already has ${max} DevTools connections open, the most it may have; close one before opening another.`,
      });
    }
    this.devtoolsConnections++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.devtoolsConnections--;
    };
  }

  nextCaptureName(): string {
    return captureFileName(this.nextFileMs());
  }

  nextPdfName(): string {
    return pdfFileName(this.nextFileMs());
  }

  /** Stored files are named by unix ms on one clock: two in one millisecond still differ. */
  private nextFileMs(): number {
    this.lastCaptureMs = Math.max(Date.now(), this.lastCaptureMs + 1);
    return this.lastCaptureMs;
  }

  mark(): number {
    return this.blockedCount;
  }

  blockedSince(mark: number): boolean {
    return this.blockedCount > mark;
  }

  noteBlocked(): void {
    this.blockedCount++;
  }

  /** Marks the session ended; the caller disposes of the browser it returns. */
  end(status: 'closed' | 'expired', reason: EndReason): PooledBrowser | undefined {
    const browser = this.browser;
    this.status = status;
    this.endReason = reason;
    this.endedAt = Date.now();
    this.browser = undefined;
    return browser;
  }

  view(): Session__Output {
    return {
      session_id: this.id,
      status: this.status,
      created_at: this.createdAt.toISOString(),
      current_url: this.history.at(-1) ?? '',
      history: [...this.history],
      screenshots: [...this.screenshots],
      pdfs: [...this.pdfs],
      owner_key_id: this.ownerKeyId,
      end_reason: this.endReason ?? '',
    };
  }

  /** history = every http(s) URL the main frame commits to, in order (redirects included). */
  private watch(browser: PooledBrowser): void {
    browser.page.on('framenavigated', (frame) => {
      if (frame !== browser.page.mainFrame() || this.browser !== browser) return;
      const url = frame.url();
      if (url.startsWith('http:') || url.startsWith('https:')) {
        this.history.push(url);
      }
    });
  }
}

/** `410 session_closed`, saying why as `details` does (the gateway words it the same way). */
function sessionClosed(reason: string | undefined): SwitchboardError {
  return new SwitchboardError(
    'session_closed',
    reason ? { message: `The browser session is closed (end_reason: ${reason}).` } : {},
  );
}
