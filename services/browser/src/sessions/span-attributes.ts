// What the browser's spans say about a call, and what they must never say: a URL's path, query
// string or fragment may carry a secret (a token, a signed link), and page content is the user's.
import { SwitchboardError } from '@switchboard/errors';
import type { withSpan } from '@switchboard/telemetry';

export type SpanAttributes = Parameters<typeof withSpan>[2];
export type ActionSpan = Parameters<Parameters<typeof withSpan>[3]>[0];

export const SESSION_ID = 'browser.session_id';
/** `ok`, or the error code the caller gets (`url_not_allowed`, `navigation_failed`, …). */
export const OUTCOME = 'browser.outcome';

/** How a call ended, for its span: the SwitchboardError code, else `error`. */
export function actionOutcome(error: unknown): string {
  return error instanceof SwitchboardError ? error.code : 'error';
}

/** The URL's scheme and host (OpenTelemetry's `url.scheme`, `server.address`), nothing else. */
export function urlOrigin(url: string): SpanAttributes {
  try {
    const parsed = new URL(url);
    return { 'url.scheme': parsed.protocol.replace(/:$/, ''), 'server.address': parsed.hostname };
  } catch {
    return {};
  }
}
