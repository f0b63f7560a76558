import type { CDPSession, Page, Request, Response } from 'playwright-core';
import { SwitchboardError } from '@switchboard/errors';
import { elementError, navigationFailed, netErrorName } from './page-errors.js';

/** How long input/submit wait for their selector to match (5 s, then element_not_found). */
export const ELEMENT_WAIT_MS = 5_000;
/**
 * How long submit waits for a navigation to *start* after its click. Form submissions and
 * link clicks start theirs within the same task, so this only delays submits that do not navigate.
 */
const NAVIGATION_START_GRACE_MS = 300;

/** The header the address guard's proxy puts on the answers it makes itself. */
const GUARD_HEADER = 'x-switchboard-guard';

export interface PageLoad {
  url: string;
  title: string;
  httpStatus: number;
}

/** Whether the guard refused a request while `action` ran (the session's proxy reports these). */
export interface GuardWatch {
  blockedSince(mark: number): boolean;
  mark(): number;
}

const notAllowed = (cause?: unknown) =>
  new SwitchboardError('url_not_allowed', {
    param: 'url',
    message: 'The URL, or a redirect it led to, points to an address that may not be opened.',
    cause,
  });

/** The guard's own answer for the main document means the navigation was refused or failed. */
async function checkGuardAnswer(response: Response | null): Promise<void> {
  const verdict = response ? await response.headerValue(GUARD_HEADER) : null;
  if (verdict === 'blocked') throw notAllowed();
  if (verdict === 'dns_failed' || verdict === 'connect_failed') {
    throw new SwitchboardError('navigation_failed', {
      message: `The page could not be loaded (${verdict === 'dns_failed' ? 'host not found' : 'connection failed'}).`,
    });
  }
}

/** Leaves a refused or failed page: the guard's answer must not stay on screen as the page. */
async function leave(page: Page): Promise<void> {
  await page.goto('about:blank', { timeout: 5_000 }).catch(() => undefined);
}

export async function navigate(
  page: Page,
  url: string,
  guard: GuardWatch,
  timeoutMs: number,
): Promise<PageLoad> {
  const mark = guard.mark();
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'load', timeout: timeoutMs });
    await checkGuardAnswer(response);
  } catch (error) {
    await leave(page);
    // Over HTTPS the guard refuses the CONNECT, which Chromium reports as a tunnel failure.
    if (netErrorName(error) && guard.blockedSince(mark)) throw notAllowed(error);
    throw navigationFailed(error);
  }
  return { url: page.url(), title: await page.title(), httpStatus: response?.status() ?? 200 };
}

export async function fill(page: Page, selector: string, text: string): Promise<void> {
  try {
    await page.fill(selector, text, { timeout: ELEMENT_WAIT_MS });
  } catch (error) {
    throw elementError(error, selector);
  }
}

/**
 * Clicks the element, or submits it when it is a form (requestSubmit, so validation and submit
 * handlers run as for a user), then waits for the navigation this caused, if any, to load.
 */
export async function submit(
  page: Page,
  selector: string,
  guard: GuardWatch,
  timeoutMs: number,
): Promise<string> {
  let element;
  try {
    element = await page.waitForSelector(selector, { state: 'attached', timeout: ELEMENT_WAIT_MS });
  } catch (error) {
    throw elementError(error, selector);
  }
  if (!element) throw elementError(new Error('detached'), selector);
  const mark = guard.mark();
  const navigation = watchMainFrameNavigation(page);
  try {
    const isForm = await element.evaluate((node: { tagName?: string }) => node.tagName === 'FORM');
    if (isForm) await element.evaluate((form: { requestSubmit(): void }) => form.requestSubmit());
    else await element.click({ timeout: ELEMENT_WAIT_MS });
  } catch (error) {
    navigation.stop();
    throw elementError(error, selector);
  }
  try {
    await navigation.settled(NAVIGATION_START_GRACE_MS, timeoutMs);
  } catch (error) {
    await leave(page);
    if (guard.blockedSince(mark)) throw notAllowed(error);
    throw navigationFailed(error);
  }
  return page.url();
}

/**
 * Follows the main frame's next navigation: resolves once it has loaded (or when none starts
 * within the grace), rejects when it fails or the guard refused its document.
 */
function watchMainFrameNavigation(page: Page) {
  let started: Request | undefined;
  let lastDocument: Response | null = null;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const isMainDocument = (request: Request) =>
    request.isNavigationRequest() && request.frame() === page.mainFrame();
  const onRequest = (request: Request) => {
    if (!isMainDocument(request)) return;
    started ??= request;
    wake?.();
  };
  const onResponse = (response: Response) => {
    if (isMainDocument(response.request())) lastDocument = response;
  };
  const onFailed = (request: Request) => {
    if (!isMainDocument(request)) return;
    failure = new Error(request.failure()?.errorText ?? 'navigation failed');
    wake?.();
  };
  // The current document loaded long ago, so the next 'load' is the new document's.
  let loaded = false;
  const onLoad = () => {
    loaded = true;
    wake?.();
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  page.on('requestfailed', onFailed);
  page.on('load', onLoad);
  const stop = () => {
    page.off('request', onRequest);
    page.off('response', onResponse);
    page.off('requestfailed', onFailed);
    page.off('load', onLoad);
  };
  const until = (condition: () => boolean, ms: number) =>
    new Promise<boolean>((resolve) => {
      if (condition()) return resolve(true);
      const timer = setTimeout(() => resolve(condition()), ms);
      wake = () => {
        if (!condition()) return;
        clearTimeout(timer);
        resolve(true);
      };
    });
  return {
    stop,
    async settled(graceMs: number, timeoutMs: number): Promise<void> {
      try {
        if (!(await until(() => started !== undefined || failure !== undefined, graceMs))) return;
        const done = await until(() => loaded || failure !== undefined, timeoutMs);
        if (failure) throw failure;
        if (!done)
          throw new SwitchboardError('navigation_failed', {
            message: 'The page did not finish loading in time.',
          });
        await checkGuardAnswer(lastDocument);
      } finally {
        stop();
      }
    },
  };
}

/**
 * The viewport as PNG, straight from CDP: Page.captureScreenshot with optimizeForSpeed (a faster
 * PNG encoder setting, same pixels), without Playwright's per-shot style injection and font waits.
 */
export async function screenshot(cdp: CDPSession): Promise<Buffer> {
  const { data } = await cdp.send('Page.captureScreenshot', {
    format: 'png',
    optimizeForSpeed: true,
    captureBeyondViewport: false,
  });
  return Buffer.from(data, 'base64');
}
