import { rm } from 'node:fs/promises';
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';
import type { Logger } from '@switchboard/telemetry';
import type { AllowedHosts, HostResolver } from '@switchboard/address-guard';
import { type BlockedInfo, type ForwardProxy, startForwardProxy } from '../guard/forward-proxy.js';
import { guardAllRequests } from '../guard/request-guard.js';
import { BrowserTargets } from './browser-targets.js';
import { chromiumEnv } from './chromium-env.js';
import { launchChromium, type ChromiumProcess } from './chromium-process.js';
import type { ChromiumIsolation } from './chromium-user.js';
import { chromiumFlags } from './launch-flags.js';
import { createProfileDir } from './profile-dir.js';

export interface LaunchSpec {
  chromiumPath: string;
  profileRoot: string;
  allowed: AllowedHosts;
  resolver: HostResolver;
  /** Whom Chromium runs as and whether with its sandbox, as checked at start-up (sandbox-check.ts). */
  isolation: ChromiumIsolation;
  /** What one session's browser may hold; absent: Chromium's own heap limit and no tab bound. */
  limits?: BrowserLimits;
  logger: Logger;
}

export interface BrowserLimits {
  /** BROWSER_RENDERER_HEAP_MB: every renderer's JavaScript heap. */
  rendererHeapMb: number;
  /** BROWSER_MAX_TABS: tabs open at once, in every context. */
  maxTabs: number;
}

/** A request the guard refused: by the proxy, or by the second layer before it got there. */
export type BlockedRequest = BlockedInfo;

/** Profile directories are named after the worker's pid, so a successor can sweep up after a crash. */
export const PROFILE_PREFIX = 'sb-browser-';

/**
 * One Chromium process with everything a session needs already in place: its own empty profile,
 * its own address-guard proxy, a Playwright connection over CDP and a blank page. Launching and
 * connecting take most of a second, which is why the pool does it before anyone asks.
 */
export class PooledBrowser {
  /** Told about every request the guard refused, while a session holds this browser. */
  onBlocked: ((request: BlockedRequest) => void) | undefined;
  private disposing: Promise<void> | undefined;

  private constructor(
    readonly chromium: ChromiumProcess,
    private readonly proxy: ForwardProxy,
    private readonly browser: Browser,
    readonly context: BrowserContext,
    readonly page: Page,
    /** A raw CDP session on the page, for the calls Playwright wraps in extra round trips. */
    readonly cdp: CDPSession,
    /** Every tab of every context: the tab bound and crashed pages. */
    readonly targets: BrowserTargets,
    private readonly profileDir: string,
  ) {}

  get cdpUrl(): string {
    return this.chromium.cdpUrl;
  }

  get exited(): Promise<void> {
    return this.chromium.exited;
  }

  get isAlive(): boolean {
    return !this.chromium.hasExited && this.disposing === undefined;
  }

  static async launch(spec: LaunchSpec): Promise<PooledBrowser> {
    const profileDir = await createProfileDir(
      spec.profileRoot,
      `${PROFILE_PREFIX}${process.pid}-`,
      spec.isolation.user,
    );
    let proxy: ForwardProxy | undefined;
    let process_: ChromiumProcess | undefined;
    try {
      // The proxy starts first (Chromium's flags name its port); it reports to the browser once built.
      const owner: { browser?: PooledBrowser } = {};
      proxy = await startForwardProxy({
        allowed: spec.allowed,
        resolver: spec.resolver,
        logger: spec.logger,
        onBlocked: (info) => owner.browser?.onBlocked?.(info),
      });
      process_ = await launchChromium(
        spec.chromiumPath,
        chromiumFlags({
          profileDir,
          proxyPort: proxy.port,
          sandbox: spec.isolation.sandbox,
          rendererHeapMb: spec.limits?.rendererHeapMb,
        }),
        { env: chromiumEnv(profileDir), user: spec.isolation.user },
      );
      const browser = await chromium.connectOverCDP(process_.cdpUrl);
      const context = browser.contexts()[0] ?? (await browser.newContext());
      const browserCdp = await browser.newBrowserCDPSession();
      // Second layer behind the proxy, for every page of every context: refuse forbidden schemes,
      // literal addresses and ports early, and every service worker (service-workers.ts).
      await guardAllRequests(browserCdp, spec.allowed, (info) => owner.browser?.onBlocked?.(info));
      // Playwright's connection asks Chromium to save the default context's downloads in a
      // folder of its own; nothing a page downloads is kept on the worker (the managed policy
      // refuses downloads in the other contexts, whose behaviour nobody set).
      await browserCdp.send('Browser.setDownloadBehavior', { behavior: 'deny' });
      const targets = await BrowserTargets.watch(browserCdp, spec.limits?.maxTabs ?? Infinity, spec.logger);
      // The tab Chromium opened at launch (about:blank). Not simply the first page: Chromium also
      // keeps WebUI pages of its own (chrome://omnibox-popup.top-chrome/…) in this context, which
      // the managed policy turns into error pages; driving one of those as the session's page
      // would navigate a hidden tab whose screenshots never come.
      const page = context.pages().find((p) => p.url() === 'about:blank') ?? (await context.newPage());
      const cdp = await context.newCDPSession(page);
      owner.browser = new PooledBrowser(process_, proxy, browser, context, page, cdp, targets, profileDir);
      return owner.browser;
    } catch (error) {
      await process_?.stop(0);
      await proxy?.close();
      await removeProfile(profileDir);
      throw error;
    }
  }

  /** Kills the browser, closes its proxy and deletes its profile; safe to call more than once. */
  dispose(): Promise<void> {
    this.disposing ??= (async () => {
      this.onBlocked = undefined;
      this.targets.onCrashed = undefined;
      await this.chromium.stop();
      // The CDP connection is already broken; this only releases Playwright's side of it.
      await this.browser.close().catch(() => undefined);
      await this.proxy.close();
      await removeProfile(this.profileDir);
    })();
    return this.disposing;
  }
}

async function removeProfile(dir: string): Promise<void> {
  // Chromium may still be flushing files as it exits; rm retries on EBUSY/ENOTEMPTY.
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
