import type { CDPSession, Page } from 'playwright-core';
import { WebSocket, type RawData } from 'ws';
import type { Logger } from '@switchboard/telemetry';
import type { BrowserSession } from '../sessions/session.js';
import { InvalidViewerMessage, parseViewerMessage, type ViewerMessage } from './viewer-messages.js';
import { WorkingTab } from './working-tab.js';

export type LiveMode = 'view' | 'interact';

/** Close codes the viewer page explains (4000–4999 are the application's own, RFC 6455 §7.4.2). */
export const CLOSE_SESSION_ENDED = 4003;
const CLOSE_POLICY_VIOLATION = 1008;

/** A still page gets its last frame again this often, so the viewer can tell it is not frozen. */
const RESEND_AFTER_MS = 1_000;
/** How often the session's state and working tab are looked at. */
const CHECK_EVERY_MS = 500;
/** A viewer with more than this queued is slow: new frames are dropped until it catches up. */
const MAX_BUFFERED_BYTES = 512 * 1024;
const JPEG_QUALITY = 70;

/**
 * One viewer of one session: Chromium's screencast of the tab the session works in, over a CDP
 * session of the worker's own, sent as JPEG binary messages; in interact mode, the viewer's
 * mouse, wheel and key messages dispatched as CDP Input events. The viewer's socket reaches
 * nothing else: it never speaks CDP, and the mode comes from the gateway, not from it.
 */
export class LiveView {
  private cdp: CDPSession | undefined;
  private page: Page | undefined;
  private lastFrame: Buffer | undefined;
  private lastSentAt = 0;
  /** The picture's size in CSS pixels, from the latest frame (the viewport until then). */
  private picture = { width: 0, height: 0 };
  private readonly timer: NodeJS.Timeout;
  private ended = false;
  private switching: Promise<void> = Promise.resolve();
  private tabs: WorkingTab | undefined;
  /** Screencast frames of the tab watched now (a screenshot never replaces a newer one). */
  private framesOfTab = 0;

  constructor(
    private readonly session: BrowserSession,
    private readonly socket: WebSocket,
    private readonly mode: LiveMode,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    socket.on('close', () => this.stop());
    socket.on('error', () => this.stop());
    this.send(JSON.stringify({ type: 'hello', mode }));
    this.check();
  }

  private check(): void {
    if (this.ended) return;
    const browser = this.session.browser;
    if (this.session.status !== 'active' || !browser) {
      this.finish(CLOSE_SESSION_ENDED, 'session_ended');
      return;
    }
    // The tab the session works in: when that changes, the picture follows it.
    this.tabs ??= new WorkingTab(browser.context, browser.page, () => this.session.actionCount);
    const page = this.tabs.current();
    if (page !== this.page) {
      this.page?.off('domcontentloaded', this.onLoaded);
      this.page = page;
      page.on('domcontentloaded', this.onLoaded);
      this.framesOfTab = 0;
      this.switching = this.switching.then(() => this.watch(page));
    }
    if (this.lastFrame && Date.now() - this.lastSentAt >= RESEND_AFTER_MS) this.sendFrame(this.lastFrame);
  }

  /**
   * A new document may live in another renderer than the one the screencast was started in (a
   * tab opened blank, then sent to a site): its frames would not come, so the tab is watched
   * afresh over a new CDP session.
   */
  private readonly onLoaded = (page: Page): void => {
    if (this.ended || page !== this.page) return;
    this.switching = this.switching.then(() => this.watch(page));
  };

  private async watch(page: Page): Promise<void> {
    const browser = this.session.browser;
    // The first picture at once, over the session's own CDP session, while the screencast starts.
    if (!this.lastFrame && browser?.page === page) void this.firstPicture(page, browser.cdp);
    const previous = this.cdp;
    this.cdp = undefined;
    await previous?.detach().catch(() => undefined);
    if (this.ended || page !== this.page) return;
    try {
      const cdp = await page.context().newCDPSession(page);
      if (this.ended || page !== this.page) {
        await cdp.detach().catch(() => undefined);
        return;
      }
      this.cdp = cdp;
      const viewport = page.viewportSize() ?? { width: 1280, height: 720 };
      this.picture = { ...viewport };
      cdp.on('Page.screencastFrame', (frame: ScreencastFrame) => this.onFrame(cdp, frame));
      // A tab followed later shows at once too, rather than the tab it replaces until it paints.
      if (previous) void this.firstPicture(page, cdp);
      await cdp.send('Page.startScreencast', {
        format: 'jpeg',
        quality: JPEG_QUALITY,
        maxWidth: viewport.width,
        maxHeight: viewport.height,
      });
    } catch (error) {
      // The tab closed or the browser went away: the next check finds out which.
      if (!this.ended) this.log.debug({ err: error }, 'live view could not watch the tab');
    }
  }

  /**
   * A screenshot to start from: a page that paints nothing new sends no screencast frame at all,
   * and starting the screencast takes a few round trips more.
   */
  private async firstPicture(page: Page, cdp: CDPSession): Promise<void> {
    const framesBefore = this.framesOfTab;
    try {
      const shot = await cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: JPEG_QUALITY });
      // Only while nothing newer of this tab came: a screencast frame beats it.
      if (this.ended || page !== this.page || this.framesOfTab !== framesBefore) return;
      this.lastFrame = Buffer.from(shot.data, 'base64');
      this.sendFrame(this.lastFrame);
    } catch {
      // The screencast's frames come all the same.
    }
  }

  private onFrame(cdp: CDPSession, frame: ScreencastFrame): void {
    // Acked at once, whether or not the viewer gets it: Chromium sends the next when it changes.
    cdp.send('Page.screencastFrameAck', { sessionId: frame.sessionId }).catch(() => undefined);
    if (cdp !== this.cdp || this.ended) return;
    this.framesOfTab++;
    const { deviceWidth, deviceHeight } = frame.metadata;
    if (deviceWidth > 0 && deviceHeight > 0) this.picture = { width: deviceWidth, height: deviceHeight };
    this.lastFrame = Buffer.from(frame.data, 'base64');
    this.sendFrame(this.lastFrame);
  }

  /** Never queues: a viewer still reading earlier frames misses this one (it gets a later one). */
  private sendFrame(jpeg: Buffer): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) return;
    this.lastSentAt = Date.now();
    this.socket.send(jpeg, { binary: true });
  }

  private send(text: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    let message: ViewerMessage;
    try {
      if (isBinary) throw new InvalidViewerMessage('binary');
      message = parseViewerMessage(rawText(data));
    } catch (error) {
      const reason = error instanceof InvalidViewerMessage ? error.message : 'invalid message';
      this.finish(CLOSE_POLICY_VIOLATION, `invalid message: ${reason}`);
      return;
    }
    // A view link's input goes nowhere, whatever its page sends.
    if (this.mode !== 'interact') return;
    const cdp = this.cdp;
    if (!cdp || this.session.status !== 'active') return;
    this.session.touch();
    for (const params of inputEvents(message, this.picture)) {
      const method = message.type === 'key' ? 'Input.dispatchKeyEvent' : 'Input.dispatchMouseEvent';
      cdp.send(method, params as never).catch(() => undefined);
    }
  }

  private finish(code: number, reason: string): void {
    if (this.ended) return;
    if (code === CLOSE_SESSION_ENDED) this.send(JSON.stringify({ type: 'ended', reason }));
    this.stop();
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(code, reason);
    else this.socket.terminate();
  }

  private stop(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    this.tabs?.dispose();
    this.page?.off('domcontentloaded', this.onLoaded);
    const cdp = this.cdp;
    this.cdp = undefined;
    this.lastFrame = undefined;
    void cdp?.detach().catch(() => undefined);
  }
}

interface ScreencastFrame {
  data: string;
  sessionId: number;
  metadata: { deviceWidth: number; deviceHeight: number };
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

const CDP_MOUSE = { move: 'mouseMoved', down: 'mousePressed', up: 'mouseReleased' } as const;

/** The CDP Input parameters for one viewer message, its point scaled from the picture to the viewport. */
export function inputEvents(
  message: ViewerMessage,
  picture: { width: number; height: number },
): Record<string, unknown>[] {
  if (message.type === 'key') {
    const text = keyTextOf(message.key);
    const type = message.action === 'up' ? 'keyUp' : text ? 'keyDown' : 'rawKeyDown';
    return [
      {
        type,
        key: message.key,
        code: message.code,
        windowsVirtualKeyCode: message.keyCode,
        modifiers: message.modifiers,
        ...(type === 'keyDown' ? { text, unmodifiedText: text } : {}),
      },
    ];
  }
  const x = Math.round(message.x * picture.width);
  const y = Math.round(message.y * picture.height);
  if (message.type === 'wheel') {
    return [
      { type: 'mouseWheel', x, y, deltaX: message.dx, deltaY: message.dy, modifiers: message.modifiers },
    ];
  }
  const button = message.button;
  const at = { x, y, button, modifiers: message.modifiers };
  if (message.action === 'click') {
    return [
      { type: 'mouseMoved', ...at, button: 'none' },
      { type: 'mousePressed', ...at, clickCount: 1 },
      { type: 'mouseReleased', ...at, clickCount: 1 },
    ];
  }
  const pressing = message.action !== 'move';
  return [{ type: CDP_MOUSE[message.action], ...at, ...(pressing ? { clickCount: 1 } : {}) }];
}

/** What a key types: one character for a printable key, a carriage return for Enter, else nothing. */
function keyTextOf(key: string): string {
  if (key === 'Enter') return '\r';
  return [...key].length === 1 ? key : '';
}
