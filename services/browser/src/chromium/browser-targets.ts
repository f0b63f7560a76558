import type { CDPSession } from 'playwright-core';
import type { Logger } from '@switchboard/telemetry';

interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
  /** Set when a page opened this one (window.open, a link with a target), noopener included. */
  openerId?: string;
}

/** What the DevTools relay needs of the tab bound: a place for one more tab, or none. */
export interface TabReserver {
  readonly maxTabs: number;
  /**
   * Holds a place for a tab about to be created; null when the session is at its bound. The
   * returned function gives the place back once the creation has answered, naming the tab it
   * made, if any, so the tab is counted from then on even before its event arrives.
   */
  reserveTab(): ((createdTargetId?: string) => void) | null;
}

/** Chromium's own WebUI (the omnibox popup of a headless browser), listed as pages at times. */
const BROWSER_UI = /^chrome(-untrusted)?:\/\//;
/** Ids of closed tabs remembered, so a late answer naming one does not count it again. */
const REMEMBERED_CLOSED_TABS = 256;

/**
 * Every target of one browser, in every context, seen from the worker's own browser-level CDP
 * session (Target.setDiscoverTargets): how many tabs the session has open, a bound on them, and
 * which of its pages crash.
 *
 * Tabs opened over DevTools (Target.createTarget) reserve their place first, in the relay, so
 * parallel creates cannot overshoot. Tabs a page opens itself (window.open, `target=_blank`) are
 * not asked for: one that appears past the bound is closed at once, and its opener sees a closed
 * window.
 */
export class BrowserTargets implements TabReserver {
  /** Told when a page (its renderer) of this browser crashes; Chromium does not say why. */
  onCrashed: ((targetId: string) => void) | undefined;
  private readonly tabs = new Set<string>();
  private readonly closedTabs = new Set<string>();
  private reserved = 0;

  private constructor(
    private readonly cdp: CDPSession,
    readonly maxTabs: number,
    private readonly logger: Logger,
  ) {}

  /** Starts discovery; resolves once Chromium has listed the targets that already exist. */
  static async watch(cdp: CDPSession, maxTabs: number, logger: Logger): Promise<BrowserTargets> {
    const targets = new BrowserTargets(cdp, maxTabs, logger);
    cdp.on('Target.targetCreated', ({ targetInfo }: { targetInfo: TargetInfo }) =>
      targets.created(targetInfo),
    );
    cdp.on('Target.targetInfoChanged', ({ targetInfo }: { targetInfo: TargetInfo }) =>
      targets.changed(targetInfo),
    );
    cdp.on('Target.targetDestroyed', ({ targetId }: { targetId: string }) => targets.destroyed(targetId));
    cdp.on('Target.targetCrashed', ({ targetId }: { targetId: string }) => targets.onCrashed?.(targetId));
    await cdp.send('Target.setDiscoverTargets', { discover: true });
    return targets;
  }

  /** Tabs open now, in every browser context of the session. */
  get openTabs(): number {
    return this.tabs.size;
  }

  reserveTab(): ((createdTargetId?: string) => void) | null {
    if (this.tabs.size + this.reserved >= this.maxTabs) return null;
    this.reserved++;
    let held = true;
    return (createdTargetId) => {
      if (!held) return;
      held = false;
      this.reserved--;
      if (createdTargetId !== undefined && !this.closedTabs.has(createdTargetId))
        this.tabs.add(createdTargetId);
    };
  }

  private created(info: TargetInfo): void {
    if (!isTab(info)) return;
    this.tabs.add(info.targetId);
    if (info.openerId !== undefined && this.tabs.size + this.reserved > this.maxTabs) {
      this.logger.info({ max_tabs: this.maxTabs }, 'tab opened by a page past the bound; closed');
      this.cdp.send('Target.closeTarget', { targetId: info.targetId }).catch(() => undefined);
    }
  }

  private changed(info: TargetInfo): void {
    if (isTab(info)) this.tabs.add(info.targetId);
    else this.tabs.delete(info.targetId);
  }

  private destroyed(targetId: string): void {
    if (!this.tabs.delete(targetId)) return;
    this.closedTabs.add(targetId);
    if (this.closedTabs.size > REMEMBERED_CLOSED_TABS) {
      const oldest = this.closedTabs.values().next().value;
      if (oldest !== undefined) this.closedTabs.delete(oldest);
    }
  }
}

function isTab(info: TargetInfo): boolean {
  return info.type === 'page' && !BROWSER_UI.test(info.url);
}
