/**
 * /api/browser/...: browser sessions, each its own Chromium process owned by the key id that
 * created it, their DevTools WebSocket and their screenshots. The request bodies here are the
 * ones routes/browser.ts validates.
 */
import type { ErrorCode } from '@switchboard/errors';
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { keyErrors, workerErrors } from './responses.js';

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

/** Session ids are UUID v4 (sessions/session-id.ts answers any other id 404 without asking a worker). */
export const sessionId = z.uuid();

export const BrowserSessionStatus = z.enum(['active', 'closed', 'expired']).meta({
  id: 'BrowserSessionStatus',
  description:
    '`active` → `closed` (by close) or `expired` (idle for `BROWSER_IDLE_TIMEOUT_MS`, default 10 minutes).',
});
export type SessionStatus = z.infer<typeof BrowserSessionStatus>;

export const SessionEndReason = z
  .enum(['closed', 'expired', 'memory_limit', 'page_crashed', 'browser_exited', 'shutdown', 'worker_gone'])
  .nullable()
  .meta({
    id: 'SessionEndReason',
    description:
      "Why the session ended; null while it is active. `closed`: by close (its owner's or an admin's); `expired`: idle; `memory_limit`: its browser passed the worker's per-session memory limit (`BROWSER_SESSION_MEMORY_MB`); `page_crashed`: one of its pages crashed, as a page whose JavaScript heap passes `BROWSER_RENDERER_HEAP_MB` does; `browser_exited`: its browser ended by itself (e.g. a DevTools client's `Browser.close`); `shutdown`: its worker stopped; `worker_gone`: its worker stopped answering.",
  });

export const SessionCreated = z
  .object({
    session_id: sessionId,
    status: z.literal('active'),
    created_at: z.iso.datetime().meta({ description: 'ISO 8601, UTC (`Z`).' }),
    devtools_url: z.string().meta({
      description: '`ws://…/api/browser/session/<id>/devtools`: the Chrome DevTools Protocol endpoint.',
    }),
  })
  .meta({ id: 'SessionCreated' });

export const NavigateResult = z
  .object({
    session_id: sessionId,
    url: z.string().meta({ description: 'The final URL after redirects.' }),
    title: z.string(),
    http_status: z.number().int(),
  })
  .meta({ id: 'NavigateResult' });

export const InputResult = z
  .object({ session_id: sessionId, selector: z.string() })
  .meta({ id: 'InputResult' });

export const SubmitResult = z
  .object({
    session_id: sessionId,
    url: z.string().meta({ description: 'The URL after any navigation settles.' }),
  })
  .meta({ id: 'SubmitResult' });

export const CaptureResult = z
  .object({
    screenshot: z
      .string()
      .meta({ description: '`<session id>/capture-<unix ms>.png`; two captures never share a name.' }),
    url: z.string().meta({ description: '`/api/browser/screenshots/<session id>/capture-<unix ms>.png`.' }),
  })
  .meta({ id: 'CaptureResult' });

export const SessionDetails = z
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

export const SessionPath = z.object({
  id: sessionId.meta({
    description: 'The browser session id (UUID v4). Sessions of other keys are `404 session_not_found`.',
  }),
});

export const tag = 'Browser sessions';
export const base = '/api/browser/session';
/** What every session route declares alike: its tag and API-key auth. */
export const sessionSurface = { tag, auth: 'apiKey' } as const;
/** A route on one session, named by the `{id}` in its path. */
export const onOneSession = { ...sessionSurface, params: SessionPath } as const;
/** Every call on an existing session. */
export const onSession: readonly ErrorCode[] = [...keyErrors, 'session_not_found', ...workerErrors];
/** Every action (not `details`) on a session that may have ended. */
export const action: readonly ErrorCode[] = [...onSession, 'session_closed', 'session_expired'];
