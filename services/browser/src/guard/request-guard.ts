import type { CDPSession } from 'playwright-core';
import { type AllowedHosts, portOf } from '@switchboard/address-guard';
import type { BlockedInfo } from './forward-proxy.js';
import { guardHeader, refusals } from './proxy-wire.js';
import { isServiceWorkerScript } from './service-workers.js';
import { checkNavigationUrl } from './url-policy.js';

/** Schemes the page may load without the network; everything else must pass the URL policy. */
const localSchemes = new Set(['data:', 'blob:', 'about:']);

/** Whether the second layer lets a request with this URL go on to the proxy. */
export function requestAllowed(url: string, allowed: AllowedHosts): boolean {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase() ?? '';
  if (localSchemes.has(scheme)) return true;
  try {
    checkNavigationUrl(url, allowed);
    return true;
  } catch {
    return false;
  }
}

interface RequestPaused {
  requestId: string;
  request: { url: string; headers: Record<string, string> };
}

/** Why the second layer refuses this request, or null to let it go on to the proxy. */
function refusalReason(request: RequestPaused['request'], allowed: AllowedHosts): string | null {
  if (isServiceWorkerScript(request.headers)) return 'service worker';
  return requestAllowed(request.url, allowed) ? null : 'second layer';
}

/**
 * The second layer behind the proxy: a forbidden scheme, a blocked literal address or port, and
 * every service worker script (service-workers.ts) are refused before Chromium sends them
 * anywhere. Names are left to the proxy, which resolves them once and connects to exactly the
 * address it checked.
 *
 * It intercepts on the browser target, not per page: Chromium then pauses every request of every
 * page, frame and worker in every browser context, however the page was opened. Per-page
 * interception (Playwright's context.route) starts only once its own session has attached to a
 * page, and a DevTools client that auto-attaches and resumes a new page first gets ahead of it.
 */
export async function guardAllRequests(
  browserCdp: CDPSession,
  allowed: AllowedHosts,
  /** Told of each refused request, as the proxy tells of its own (the session answers 400). */
  onBlocked: (info: BlockedInfo) => void,
): Promise<void> {
  browserCdp.on('Fetch.requestPaused', (event: RequestPaused) => {
    const { requestId, request } = event;
    const reason = refusalReason(request, allowed);
    const ok = reason === null;
    if (!ok) {
      const url = URL.parse(request.url);
      onBlocked({ host: url?.hostname ?? '', port: url ? portOf(url) : 80, reason });
    }
    // A refusal is answered the way the proxy answers one (403 with the guard header), not by
    // failing the request: a failed main-frame request commits Chromium's error page, which
    // races the session's next navigation, while an answer reads as the guard's verdict.
    const reply = ok
      ? browserCdp.send('Fetch.continueRequest', { requestId })
      : browserCdp.send('Fetch.fulfillRequest', {
          requestId,
          responseCode: refusals.blocked.status,
          responseHeaders: [
            { name: guardHeader, value: 'blocked' },
            { name: 'content-type', value: 'text/plain; charset=utf-8' },
          ],
          body: Buffer.from(refusals.blocked.body).toString('base64'),
        });
    // The page (or the whole browser) may have gone away meanwhile; nothing to answer then.
    reply.catch(() => undefined);
  });
  await browserCdp.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] });
}
