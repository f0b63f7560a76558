/**
 * Service workers are refused in every browser context of a session, the default one and any a
 * DevTools client creates: a service worker outlives its page, answers requests of pages that
 * never asked for it, and keeps running and fetching while nobody watches the session. No
 * session needs one to load a page.
 *
 * Chromium fetches a worker's main script with the request header `Service-Worker: script`
 * (Service Workers spec, "Update"), on registration and on every update check, and without that
 * script nothing is installed. The guard's interception on the browser target sees that fetch in
 * every context, so refusing it there refuses registration everywhere, whatever the page does to
 * its own `navigator.serviceWorker`.
 */
export function isServiceWorkerScript(headers: Record<string, string>): boolean {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'service-worker' && value.trim().toLowerCase() === 'script') return true;
  }
  return false;
}
