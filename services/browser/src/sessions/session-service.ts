import { randomUUID } from 'node:crypto';
import type {
  CaptureResponse,
  CapacityResponse,
  ContentRequest__Output,
  ContentResponse,
  CreateSessionRequest__Output,
  InputRequest__Output,
  InputResponse,
  NavigateRequest__Output,
  NavigateResponse,
  PdfRequest__Output,
  PdfResponse,
  Session__Output,
  SubmitRequest__Output,
  SubmitResponse,
} from '@switchboard/contracts';
import { sessionDetails } from '@switchboard/contracts';
import type { RegistryAnnouncer } from '@switchboard/browser-registry';
import { dependencyUnavailable, SwitchboardError } from '@switchboard/errors';
import type { EventPublisher } from '@switchboard/events';
import { OWNER_KEY_ID_METADATA, pdfKey, screenshotKey, type ObjectStore } from '@switchboard/objectstore';
import { withSpan, type Logger } from '@switchboard/telemetry';
import { BrowserPool, type PoolOptions } from '../chromium/browser-pool.js';
import type { TabReserver } from '../chromium/browser-targets.js';
import type { PooledBrowser } from '../chromium/pooled-browser.js';
import type { BrowserMetrics } from '../metrics.js';
import { contentFormats, contentResponse } from './content-request.js';
import { readPageContent } from '../content/page-content.js';
import { MemoryWatch } from './memory-watch.js';
import { paperFormat, printPdf, waitForSelector } from './page-print.js';
import { fill, navigate, screenshot, submit } from './page-actions.js';
import { BrowserSession, type EndReason } from './session.js';
import {
  actionOutcome,
  OUTCOME,
  SESSION_ID,
  urlOrigin,
  type ActionSpan,
  type SpanAttributes,
} from './span-attributes.js';
import { parseViewport } from './viewport.js';

export interface SessionServiceOptions {
  workerId: string;
  /** The warm pool this service takes browsers from: how many to keep, and how to launch one. */
  pool: Pick<PoolOptions, 'size' | 'launch'>;
  /** Sessions at once, which is also the cap on browser processes (warm ones included). */
  maxSessions: number;
  idleTimeoutMs: number;
  navigationTimeoutMs: number;
  /** What one session may hold (BROWSER_SESSION_MEMORY_MB, BROWSER_MAX_DEVTOOLS_CONNECTIONS). */
  bounds: { memoryLimitBytes: number; maxDevtoolsConnections: number };
  /** Throws url_not_allowed (or navigation_failed for a name that does not resolve). */
  checkUrl: (url: string) => Promise<void>;
  /** BROWSER_CONTENT_MAX_BYTES: the bound on each text format of `content`, in UTF-8 bytes. */
  contentMaxBytes: number;
  objects: ObjectStore;
  registry: RegistryAnnouncer;
  events: EventPublisher;
  metrics: BrowserMetrics;
  logger: Logger;
}

/** `wait_for` waits 5 s unless the caller asks for longer, and never more than 30 s. */
const waitForTimeoutMs = (asked: number): number => Math.min(asked || 5_000, 30_000);

/** Ended sessions still answer `details`, with their status, for an hour. */
const ENDED_RETENTION_MS = 60 * 60 * 1000;
const NO_CAPACITY_RETRY_AFTER_S = 5;

/** A DevTools connection's way into its session's browser, and what bounds it (relay.ts). */
export interface DevtoolsTarget {
  session: BrowserSession;
  cdpUrl: string;
  /** The session's tab bound, for Target.createTarget. */
  tabs: TabReserver;
  /** Gives back this connection's place among the session's DevTools connections; idempotent. */
  release: () => void;
}

/** Every session this worker owns, their lifecycle and the calls of `/api/browser/session/...`. */
export class SessionService {
  private readonly sessions = new Map<string, BrowserSession>();
  private creating = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly memory: MemoryWatch;
  private readonly capacityListeners: (() => void)[] = [];
  /** Owned here: how many browsers it may launch depends on how many sessions hold one. */
  readonly pool: BrowserPool;

  constructor(private readonly o: SessionServiceOptions) {
    this.pool = new BrowserPool({
      ...o.pool,
      maxBrowsers: o.maxSessions,
      inUse: () => this.activeCount,
      logger: o.logger,
      onChange: () => this.capacityChanged(),
    });
    this.memory = new MemoryWatch({
      limitBytes: o.bounds.memoryLimitBytes,
      browsers: () => this.watchedBrowsers(),
      onOverLimit: (sessionId, usedBytes) => this.onMemoryLimit(sessionId, usedBytes),
      logger: o.logger,
    });
  }

  /** Sessions holding a browser, plus creates under way (each will hold one). */
  get activeCount(): number {
    let active = this.creating;
    for (const session of this.sessions.values()) if (session.status === 'active') active++;
    return active;
  }

  /** Calls `listener` whenever active sessions or warm browsers change (the worker's heartbeat). */
  onCapacityChange(listener: () => void): void {
    this.capacityListeners.push(listener);
  }

  capacity(): CapacityResponse {
    return {
      max_sessions: this.o.maxSessions,
      active_sessions: this.activeCount,
      warm_browsers: this.pool.warmCount,
    };
  }

  /** A session from a warm browser (or one launched for it), in a `browser.create` span. */
  create(request: CreateSessionRequest__Output, keyId: string): Promise<Session__Output> {
    return this.traced('create', {}, async (span) => {
      const session = await this.createSession(request, keyId);
      span.setAttribute(SESSION_ID, session.session_id);
      return session;
    });
  }

  private async createSession(
    request: CreateSessionRequest__Output,
    keyId: string,
  ): Promise<Session__Output> {
    const viewport = parseViewport(request);
    if (!keyId) throw new SwitchboardError('unauthorized');
    if (this.activeCount >= this.o.maxSessions) {
      throw new SwitchboardError('no_capacity', { retryAfterSeconds: NO_CAPACITY_RETRY_AFTER_S });
    }
    const stop = this.timer('create');
    this.creating++;
    let counted = true; // in `creating` until the session itself is in the map
    let browser: PooledBrowser | undefined;
    let session: BrowserSession | undefined;
    try {
      browser = await this.pool.take();
      await browser.page.setViewportSize(viewport);
      session = new BrowserSession(randomUUID(), keyId, new Date(), browser);
      const created = session;
      const owned = browser;
      owned.onBlocked = () => {
        created.noteBlocked();
        this.o.metrics.blockedRequests.inc();
      };
      owned.targets.onCrashed = () => this.onPageCrashed(created, owned);
      void owned.exited.then(() => this.onBrowserExit(created, owned));
      this.sessions.set(session.id, session);
      this.creating--;
      counted = false;
      // Awaited: the gateway routes the next call by this record, possibly from another replica.
      await this.o.registry.putSession(session.view());
      this.o.events.publish('browser.session.created', {
        session_id: session.id,
        key_id: keyId,
        worker_id: this.o.workerId,
        data: sessionEventData(session.view()),
      });
      stop('ok');
      return session.view();
    } catch (error) {
      stop('error');
      // A session nobody can reach (its record was not written) must not hold a browser.
      if (session) {
        session.end('closed', 'closed');
        this.sessions.delete(session.id);
      }
      if (browser) void browser.dispose();
      if (error instanceof SwitchboardError) throw error;
      this.o.logger.error({ err: error }, 'session create failed');
      throw new SwitchboardError('unavailable', { message: 'No browser could be started.', cause: error });
    } finally {
      if (counted) this.creating--;
      this.capacityChanged();
    }
  }

  async navigate(request: NavigateRequest__Output, keyId: string): Promise<NavigateResponse> {
    const session = this.owned(request.session_id, keyId);
    const url = request.url.trim();
    if (!url) throw new SwitchboardError('invalid_request', { param: 'url', message: 'url is required.' });
    // Scheme and host only: a path or query string may carry a secret.
    return this.timed(
      'navigate',
      session.id,
      () =>
        session.run(async (browser) => {
          await this.o.checkUrl(url);
          const before = session.history.length;
          try {
            const load = await navigate(browser.page, url, session, this.o.navigationTimeoutMs);
            return { session_id: session.id, url: load.url, title: load.title, http_status: load.httpStatus };
          } catch (error) {
            // A refused or failed page is not part of the session's history.
            session.history.length = Math.min(session.history.length, before);
            throw error;
          } finally {
            this.o.registry.publishSession(session.view());
          }
        }),
      urlOrigin(url),
    );
  }

  async input(request: InputRequest__Output, keyId: string): Promise<InputResponse> {
    const session = this.owned(request.session_id, keyId);
    const selector = requireSelector(request.selector);
    return this.timed('input', session.id, () =>
      session.run(async (browser) => {
        await fill(browser.page, selector, request.text);
        return { session_id: session.id, selector };
      }),
    );
  }

  async submit(request: SubmitRequest__Output, keyId: string): Promise<SubmitResponse> {
    const session = this.owned(request.session_id, keyId);
    const selector = requireSelector(request.selector);
    return this.timed('submit', session.id, () =>
      session.run(async (browser) => {
        try {
          const url = await submit(browser.page, selector, session, this.o.navigationTimeoutMs);
          return { session_id: session.id, url };
        } finally {
          this.o.registry.publishSession(session.view());
        }
      }),
    );
  }

  async capture(sessionId: string, keyId: string): Promise<CaptureResponse> {
    const session = this.owned(sessionId, keyId);
    return this.timed('capture', session.id, () =>
      session.run(async (browser) => {
        const png = await screenshot(browser.cdp);
        const name = session.nextCaptureName();
        try {
          await this.o.objects.put(screenshotKey(session.id, name), png, {
            contentType: 'image/png',
            size: png.length,
            metadata: { [OWNER_KEY_ID_METADATA]: session.ownerKeyId },
          });
        } catch (error) {
          throw dependencyUnavailable('The screenshot could not be stored.', error);
        }
        session.screenshots.push(name);
        this.o.registry.publishSession(session.view());
        this.o.events.publish('browser.screenshot.captured', {
          session_id: session.id,
          key_id: session.ownerKeyId,
          screenshot: `${session.id}/${name}`,
          data: sessionEventData(session.view()),
        });
        return { screenshot: `${session.id}/${name}` };
      }),
    );
  }

  /** The page as it is now, in the asked formats, each bounded (content-request.ts says how). */
  async content(request: ContentRequest__Output, keyId: string): Promise<ContentResponse> {
    const session = this.owned(request.session_id, keyId);
    const formats = contentFormats(request.formats);
    return this.timed('content', session.id, () =>
      session.run(async (browser) => {
        if (request.wait_for) {
          await waitForSelector(
            browser.page,
            request.wait_for,
            waitForTimeoutMs(request.wait_for_timeout_ms),
          );
        }
        const content = await readPageContent(browser.page, {
          formats,
          ...(request.selector ? { selector: request.selector } : {}),
          mainContent: request.main_content,
          maxBytes: this.o.contentMaxBytes,
        });
        return contentResponse(session.id, content);
      }),
    );
  }

  /** Chromium's printing of the page as it is now, stored beside the session's screenshots. */
  async pdf(request: PdfRequest__Output, keyId: string): Promise<PdfResponse> {
    const session = this.owned(request.session_id, keyId);
    const format = paperFormat(request.format);
    return this.timed('pdf', session.id, () =>
      session.run(async (browser) => {
        const { pdf, pages } = await printPdf(browser.page, {
          format,
          landscape: request.landscape,
          printBackground: request.print_background,
        });
        const name = session.nextPdfName();
        try {
          await this.o.objects.put(pdfKey(session.id, name), pdf, {
            contentType: 'application/pdf',
            size: pdf.length,
            metadata: { [OWNER_KEY_ID_METADATA]: session.ownerKeyId },
          });
        } catch (error) {
          throw dependencyUnavailable('The PDF could not be stored.', error);
        }
        session.pdfs.push(name);
        this.o.registry.publishSession(session.view());
        this.o.events.publish('browser.pdf.created', {
          session_id: session.id,
          key_id: session.ownerKeyId,
          pdf: `${session.id}/${name}`,
          pages,
          data: { ...sessionEventData(session.view()), pdf: `${session.id}/${name}`, pages },
        });
        return { pdf: `${session.id}/${name}`, pages };
      }),
    );
  }

  details(sessionId: string, keyId: string): Session__Output {
    const session = this.owned(sessionId, keyId);
    if (session.status === 'active') session.touch();
    return session.view();
  }

  /** Closing an ended session answers its state again (idempotent: closing again is also 200). */
  close(sessionId: string, keyId: string): Promise<Session__Output> {
    return this.traced('close', { [SESSION_ID]: sessionId }, async () => {
      const session = this.owned(sessionId, keyId);
      // The answer waits for the registry (other gateway replicas count this key's sessions from
      // it), not for Chromium to exit: end() has already taken the browser away.
      if (session.status === 'active') await this.end(session, 'closed', 'closed').recorded;
      return session.view();
    });
  }

  list(): Session__Output[] {
    return [...this.sessions.values()].map((s) => s.view());
  }

  /**
   * For the DevTools relay: the session's browser endpoint, after the same ownership check, and
   * one of the session's DevTools connections (`429 rate_limited` when all are taken).
   */
  devtoolsTarget(sessionId: string, keyId: string): DevtoolsTarget {
    const session = this.owned(sessionId, keyId);
    session.assertActive();
    const browser = session.browser!;
    const release = session.takeDevtoolsConnection(this.o.bounds.maxDevtoolsConnections);
    session.touch();
    return { session, cdpUrl: browser.cdpUrl, tabs: browser.targets, release };
  }

  /** For a live viewer: the caller's active session (watching is not activity, so no touch). */
  liveSession(sessionId: string, keyId: string): BrowserSession {
    const session = this.owned(sessionId, keyId);
    session.assertActive();
    return session;
  }

  /**
   * Checks idle sessions and retention once a second (the 5-second kill promise needs no finer),
   * and starts measuring every session's memory.
   */
  startSweeper(intervalMs = 1_000): void {
    this.sweeper = setInterval(() => this.sweep(), intervalMs);
    this.sweeper.unref();
    this.memory.start();
  }

  /** Refreshes the registry records of active sessions so they outlive the bucket's max age. */
  refreshRecords(): void {
    for (const session of this.sessions.values()) {
      if (session.status === 'active') this.o.registry.publishSession(session.view());
    }
  }

  async shutdown(): Promise<void> {
    clearInterval(this.sweeper);
    this.memory.stop();
    const active = [...this.sessions.values()].filter((s) => s.status === 'active');
    await Promise.all(active.map((s) => this.end(s, 'expired', 'shutdown').disposed));
  }

  private capacityChanged(): void {
    for (const listener of this.capacityListeners) listener();
  }

  private sweep(now = Date.now()): void {
    for (const [id, session] of this.sessions) {
      if (session.status === 'active') {
        if (!session.isBusy && now - session.lastActivity >= this.o.idleTimeoutMs) {
          void this.end(session, 'expired', 'expired').disposed;
        }
      } else if (now - (session.endedAt ?? now) >= ENDED_RETENTION_MS) {
        this.sessions.delete(id);
      }
    }
  }

  /** A browser that exits by itself (crash, or a DevTools client's Browser.close) ends its session. */
  private onBrowserExit(session: BrowserSession, browser: PooledBrowser): void {
    if (session.browser !== browser || session.status !== 'active') return;
    this.o.logger.info({ session_id: session.id }, 'browser exited; closing its session');
    void this.end(session, 'closed', 'browser_exited').disposed;
  }

  /**
   * A crashed page ends its session. Chromium does not say why a renderer crashed, and the usual
   * cause is the renderer heap limit (BROWSER_RENDERER_HEAP_MB): the session's memory bound.
   */
  private onPageCrashed(session: BrowserSession, browser: PooledBrowser): void {
    if (session.browser !== browser || session.status !== 'active') return;
    this.o.logger.info({ session_id: session.id }, 'a page of the session crashed; closing the session');
    void this.end(session, 'closed', 'page_crashed').disposed;
  }

  private watchedBrowsers(): { sessionId: string; pid: number }[] {
    const watched: { sessionId: string; pid: number }[] = [];
    for (const session of this.sessions.values()) {
      if (session.status === 'active' && session.browser?.isAlive) {
        watched.push({ sessionId: session.id, pid: session.browser.chromium.pid });
      }
    }
    return watched;
  }

  /** One page ends its own session, killed at once: its memory is what the pod runs short of. */
  private onMemoryLimit(sessionId: string, usedBytes: number): void {
    const session = this.sessions.get(sessionId);
    const browser = session?.browser;
    if (!session || !browser || session.status !== 'active') return;
    this.o.logger.info(
      {
        session_id: session.id,
        used_mb: Math.round(usedBytes / 2 ** 20),
        limit_mb: Math.round(this.o.bounds.memoryLimitBytes / 2 ** 20),
      },
      'session passed its memory limit; closing it',
    );
    void this.end(session, 'closed', 'memory_limit').disposed;
    // No grace for a clean exit, as dispose() would give: the page may be allocating meanwhile.
    void browser.chromium.stop(0);
  }

  /** Ends the session now; `recorded` settles once the registry has it, `disposed` once Chromium is gone. */
  private end(
    session: BrowserSession,
    status: 'closed' | 'expired',
    reason: EndReason,
  ): { recorded: Promise<void>; disposed: Promise<void> } {
    const browser = session.end(status, reason);
    this.o.metrics.sessionsEnded.inc({ reason });
    this.o.events.publish(`browser.session.${status}`, {
      session_id: session.id,
      key_id: session.ownerKeyId,
      worker_id: this.o.workerId,
      reason,
      data: sessionEventData(session.view()),
    });
    const recorded = this.o.registry
      .putSession(session.view())
      .catch((error: unknown) =>
        this.o.logger.warn({ err: error, session_id: session.id }, 'session record not written'),
      );
    this.capacityChanged();
    const disposed = (browser?.dispose() ?? Promise.resolve()).then(() => this.pool.fill());
    return { recorded, disposed };
  }

  private owned(sessionId: string, keyId: string): BrowserSession {
    const session = this.sessions.get(sessionId);
    // Someone else's session is indistinguishable from a missing one (404, never 403).
    if (!session || session.ownerKeyId !== keyId) throw new SwitchboardError('session_not_found');
    return session;
  }

  private timer(action: string) {
    const end = this.o.metrics.actionSeconds.startTimer({ action });
    return (outcome: 'ok' | 'error') => end({ outcome });
  }

  /** A call on one session: timed (browser_action_duration_seconds) and in a `browser.<action>` span. */
  private timed<T>(
    action: string,
    sessionId: string,
    run: () => Promise<T>,
    attributes: SpanAttributes = {},
  ): Promise<T> {
    return this.traced(action, { [SESSION_ID]: sessionId, ...attributes }, async () => {
      const stop = this.timer(action);
      try {
        const result = await run();
        stop('ok');
        return result;
      } catch (error) {
        stop('error');
        throw error;
      }
    });
  }

  /** `work` in a `browser.<action>` span that records how it ended (ok, or the error's code). */
  private traced<T>(
    action: string,
    attributes: SpanAttributes,
    work: (span: ActionSpan) => Promise<T>,
  ): Promise<T> {
    return withSpan('browser', `browser.${action}`, attributes, async (span) => {
      try {
        const result = await work(span);
        span.setAttribute(OUTCOME, 'ok');
        return result;
      } catch (error) {
        span.setAttribute(OUTCOME, actionOutcome(error));
        throw error;
      }
    });
  }
}

/**
 * An event's `data`: the session as its `details` call shows it, plus when. Webhooks deliver it as
 * it is, so a receiver needs no call back to learn the session's state.
 */
function sessionEventData(view: Session__Output) {
  return { ...sessionDetails(view), updated_at: new Date().toISOString() };
}

function requireSelector(selector: string): string {
  if (!selector)
    throw new SwitchboardError('invalid_request', { param: 'selector', message: 'selector is required.' });
  return selector;
}
