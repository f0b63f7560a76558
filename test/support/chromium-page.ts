// The gateway's web pages (/docs, /admin) opened as a person opens them: Debian's Chromium through
// playwright-core, with everything the page does that a person would see as broken (or that
// leaks) written down for the test to check.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** The distribution's Chromium: what the browser worker runs too (nothing downloaded). */
export const chromiumPath = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // Root in a container: no user namespaces for Chromium's sandbox. Background traffic off, so
    // every request the test sees is the page's own.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /**
   * What went wrong so far: console errors (CSP violations among them), uncaught page errors,
   * failed requests and requests that left `origin`. `expected` drops console errors a step
   * causes on purpose (a refused token's 401 shows as "Failed to load resource").
   */
  problems: (expected?: RegExp[]) => string[];
}

/**
 * A fresh context (its own storage) and page on `origin`, watched from the first request.
 * `permissions`: e.g. clipboard access, granted for `origin` only.
 */
export async function watchedPage(
  browser: Browser,
  origin: string,
  options: { permissions?: string[] } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext();
  if (options.permissions) await context.grantPermissions(options.permissions, { origin });
  const page = await context.newPage();
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const other: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => other.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    requests.push(url);
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:')) {
      other.push(`request leaving ${origin}: ${request.method()} ${url}`);
    }
  });
  page.on('requestfailed', (request) =>
    other.push(`request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`),
  );
  return {
    context,
    page,
    requests,
    problems: (expected = []) => [
      ...consoleErrors.filter((text) => !expected.some((pattern) => pattern.test(text))),
      ...other,
    ],
  };
}
