import type { Route } from 'playwright-core';
import type { AllowedHosts } from './allowed-hosts.js';
import { checkNavigationUrl } from './url-policy.js';

/** Schemes the page may load without the network; everything else must pass the URL policy. */
const localSchemes = new Set(['data:', 'blob:', 'about:']);

/**
 * The second layer behind the proxy, on every request the page's context makes: a forbidden
 * scheme or a blocked literal address is aborted before Chromium sends it anywhere. Names are
 * left to the proxy, which resolves them once and connects to exactly the address it checked.
 */
export async function guardRequest(route: Route, allowed: AllowedHosts): Promise<void> {
  const url = route.request().url();
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase() ?? '';
  if (!localSchemes.has(scheme)) {
    try {
      checkNavigationUrl(url, allowed);
    } catch {
      await route.abort('blockedbyclient').catch(() => undefined);
      return;
    }
  }
  // The page may have gone away meanwhile; nothing to continue then.
  await route.continue().catch(() => undefined);
}
