/**
 * /api/browser/...: browser sessions, each its own Chromium process owned by the key id that
 * created it, their DevTools WebSocket and their screenshots. The request bodies here are the
 * ones routes/browser.ts validates.
 */
import type { ErrorCode } from '@switchboard/errors';
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { declareRoute } from './registry.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from './responses.js';

const viewport = requestLimits.viewport;
const viewportSide = (fallback: number) =>
  z.number().int().min(viewport.min).max(viewport.max).default(fallback);

export const CreateSessionRequest = z
  .object({
    viewport_width: viewportSide(viewport.defaultWidth),
    viewport_height: viewportSide(viewport.defaultHeight),
  })
  .meta({ id: 'CreateSessionRequest' });

export const NavigateRequest = z
  .object({
    url: z
      .string()
      .min(1, 'must not be empty')
      .max(8192)
      .meta({ description: 'An http(s) URL whose host is not a private, loopback or cluster address.' }),
  })
  .meta({ id: 'NavigateRequest' });

export const InputRequest = z
  .object({
    selector: z.string().min(1).max(4096).meta({
      description:
        'A CSS selector; must match within 5 s. One that cannot be parsed → `400 invalid_request` at once.',
    }),
    text: z.string().max(1_000_000).meta({ description: 'Text typed into the element.' }),
  })
  .meta({ id: 'InputRequest' });

export const SubmitRequest = z
  .object({
    selector: z.string().min(1).max(4096).meta({
      description:
        'The form (or an element inside it) to submit; must match within 5 s. A selector that cannot be parsed → `400 invalid_request` at once.',
    }),
  })
  .meta({ id: 'SubmitRequest' });

/** Session ids are UUID v4 (routes/session-id.ts answers any other id 404 without asking a worker). */
const sessionId = z.uuid();

export const BrowserSessionStatus = z.enum(['active', 'closed', 'expired']).meta({
  id: 'BrowserSessionStatus',
  description:
    '`active` → `closed` (by close) or `expired` (idle for `BROWSER_IDLE_TIMEOUT_MS`, default 10 minutes).',
});

const SessionEndReason = z
  .enum(['closed', 'expired', 'memory_limit', 'page_crashed', 'browser_exited', 'shutdown', 'worker_gone'])
  .nullable()
  .meta({
    id: 'SessionEndReason',
    description:
      "Why the session ended; null while it is active. `closed`: by close (its owner's or an admin's); `expired`: idle; `memory_limit`: its browser passed the worker's per-session memory limit (`BROWSER_SESSION_MEMORY_MB`); `page_crashed`: one of its pages crashed, as a page whose JavaScript heap passes `BROWSER_RENDERER_HEAP_MB` does; `browser_exited`: its browser ended by itself (e.g. a DevTools client's `Browser.close`); `shutdown`: its worker stopped; `worker_gone`: its worker stopped answering.",
  });

const SessionCreated = z
  .object({
    session_id: sessionId,
    status: z.literal('active'),
    created_at: z.iso.datetime().meta({ description: 'ISO 8601, UTC (`Z`).' }),
    devtools_url: z.string().meta({
      description: '`ws://…/api/browser/session/<id>/devtools`: the Chrome DevTools Protocol endpoint.',
    }),
  })
  .meta({ id: 'SessionCreated' });

const NavigateResult = z
  .object({
    session_id: sessionId,
    url: z.string().meta({ description: 'The final URL after redirects.' }),
    title: z.string(),
    http_status: z.number().int(),
  })
  .meta({ id: 'NavigateResult' });

const InputResult = z.object({ session_id: sessionId, selector: z.string() }).meta({ id: 'InputResult' });

const SubmitResult = z
  .object({
    session_id: sessionId,
    url: z.string().meta({ description: 'The URL after any navigation settles.' }),
  })
  .meta({ id: 'SubmitResult' });

const CaptureResult = z
  .object({
    screenshot: z
      .string()
      .meta({ description: '`<session id>/capture-<unix ms>.png`; two captures never share a name.' }),
    url: z.string().meta({ description: '`/api/browser/screenshots/<session id>/capture-<unix ms>.png`.' }),
  })
  .meta({ id: 'CaptureResult' });

const SessionDetails = z
  .object({
    session_id: sessionId,
    status: BrowserSessionStatus,
    created_at: z.iso.datetime(),
    current_url: z
      .string()
      .nullable()
      .meta({ description: 'The last URL the main frame committed to; null before the first navigation.' }),
    history: z.array(z.string()).meta({
      description:
        'Every URL the main frame committed to, in order (redirect targets, links followed by submit); starts empty.',
    }),
    screenshots: z.array(z.string()).meta({ description: 'File names, `capture-<unix ms>.png`.' }),
    end_reason: SessionEndReason,
  })
  .meta({ id: 'SessionDetails' });

/** Also what the admin's force-close answers (administration.ts). */
export const SessionClosed = z
  .object({ session_id: sessionId, status: z.literal('closed') })
  .meta({ id: 'SessionClosed' });

const SessionPath = z.object({
  id: sessionId.meta({
    description: 'The browser session id (UUID v4). Sessions of other keys are `404 session_not_found`.',
  }),
});

const tag = 'Browser sessions';
const base = '/api/browser/session';
/** Every call on an existing session. */
const onSession: readonly ErrorCode[] = [...keyErrors, 'session_not_found', ...workerErrors];
/** Every action (not `details`) on a session that may have ended. */
const action: readonly ErrorCode[] = [...onSession, 'session_closed', 'session_expired'];

// The body of create may be left out (every field has a default).
const optionalCreateBody = { required: false, content: json(CreateSessionRequest) };

declareRoute({
  method: 'post',
  path: `${base}/create`,
  operationId: 'createBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Create a browser session',
  description:
    "Takes a Chromium process from the pre-launched pool. The session and its screenshots belong to the key id that created it. Too many sessions for the key's tier → `429 session_limit`; no browser capacity anywhere → `503 no_capacity`, and so is one more session for a key that already holds its share of the cluster's browsers (`BROWSER_KEY_CAPACITY_SHARE`, default half) while other keys are being turned away — both with `Retry-After`.",
  body: optionalCreateBody,
  responses: { 201: { description: 'The session.', content: json(SessionCreated) } },
  errors: [...keyErrors, ...jsonBodyErrors, 'session_limit', 'no_capacity', ...workerErrors],
});

declareRoute({
  method: 'post',
  path: `${base}/{id}/navigate`,
  operationId: 'navigateBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Open a URL',
  description:
    'Answers after the `load` event. Non-http(s) URLs and hosts that resolve to loopback, private, link-local, CGNAT, metadata, multicast or cluster-internal addresses (at connect time, after every redirect, for sub-resources too) → `400 url_not_allowed`. DNS failure, refused connection or a page that never loads → `502 navigation_failed`.',
  params: SessionPath,
  body: NavigateRequest,
  responses: { 200: { description: 'The page loaded.', content: json(NavigateResult) } },
  errors: [...action, ...jsonBodyErrors, 'url_not_allowed', 'navigation_failed'],
});

declareRoute({
  method: 'post',
  path: `${base}/{id}/input`,
  operationId: 'inputBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Type text into an element',
  params: SessionPath,
  body: InputRequest,
  responses: { 200: { description: 'The text was typed.', content: json(InputResult) } },
  errors: [...action, ...jsonBodyErrors, 'element_not_found'],
});

declareRoute({
  method: 'post',
  path: `${base}/{id}/submit`,
  operationId: 'submitBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Submit a form',
  params: SessionPath,
  body: SubmitRequest,
  responses: {
    200: { description: 'The form was submitted and any navigation settled.', content: json(SubmitResult) },
  },
  errors: [...action, ...jsonBodyErrors, 'element_not_found', 'url_not_allowed', 'navigation_failed'],
});

declareRoute({
  method: 'post',
  path: `${base}/{id}/capture`,
  operationId: 'captureBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Take a screenshot',
  description: 'No body. Screenshots outlive the session (retention is configuration, default 7 days).',
  params: SessionPath,
  responses: { 200: { description: 'The screenshot was stored.', content: json(CaptureResult) } },
  errors: action,
});

declareRoute({
  method: 'get',
  path: `${base}/{id}/details`,
  operationId: 'getBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Describe a session',
  description: 'A closed or expired session still answers, with that status, for an hour.',
  params: SessionPath,
  responses: { 200: { description: 'The session.', content: json(SessionDetails) } },
  errors: onSession,
});

declareRoute({
  method: 'post',
  path: `${base}/{id}/close`,
  operationId: 'closeBrowserSession',
  tag,
  auth: 'apiKey',
  summary: 'Close a session',
  description: 'No body. Closing a closed session again is also `200`.',
  params: SessionPath,
  responses: {
    200: { description: 'The session is closed; its browser process is gone.', content: json(SessionClosed) },
  },
  errors: onSession,
});

declareRoute({
  method: 'get',
  path: `${base}/{id}/devtools`,
  operationId: 'browserSessionDevtools',
  tag,
  auth: 'apiKey',
  summary: 'Chrome DevTools Protocol (WebSocket)',
  description:
    "A WebSocket upgrade to the session browser's DevTools endpoint, proxied. Send the API key in the `Authorization` header: Playwright `chromium.connectOverCDP(devtools_url, {headers})`, Puppeteer `puppeteer.connect({browserWSEndpoint: devtools_url, headers})`. DevTools traffic counts as session activity. A session has at most `BROWSER_MAX_DEVTOOLS_CONNECTIONS` (default 8) DevTools connections open at once, however many gateways they come through: one more is `429 rate_limited`, and the open ones keep working. `Target.createTarget` past the session's tab bound (`BROWSER_MAX_TABS`, default 10) gets a CDP error.",
  params: SessionPath,
  headers: z.object({
    Connection: z.literal('Upgrade'),
    Upgrade: z.literal('websocket'),
    'Sec-WebSocket-Key': z.string(),
    'Sec-WebSocket-Version': z.literal('13'),
  }),
  responses: {
    101: {
      // Written by the worker's relay through the proxy: none of the gateway's headers.
      gatewayHeaders: false,
      description:
        'Switching Protocols: the connection now speaks the Chrome DevTools Protocol (JSON messages over WebSocket).',
      headers: {
        Upgrade: { description: '`websocket`', schema: { const: 'websocket' } },
        Connection: { description: '`Upgrade`', schema: { const: 'Upgrade' } },
        'Sec-WebSocket-Accept': { description: 'RFC 6455 accept value.', schema: { type: 'string' } },
      },
    },
  },
  // invalid_request: a plain GET, without the upgrade (routes/browser-devtools.ts).
  errors: [...action, 'invalid_request'],
});

declareRoute({
  method: 'get',
  path: '/api/browser/screenshots/{session_id}/{filename}',
  operationId: 'getBrowserScreenshot',
  tag,
  auth: 'apiKey',
  summary: 'Download a screenshot',
  description: 'To the key that owns the session, also after the session ended.',
  params: z.object({ session_id: sessionId, filename: z.string().regex(/^capture-[0-9]+\.png$/) }),
  responses: {
    200: {
      description: 'The PNG.',
      content: { 'image/png': { schema: z.string().meta({ contentMediaType: 'image/png' }) } },
    },
  },
  errors: [...keyErrors, 'session_not_found', 'not_found', ...workerErrors],
});
