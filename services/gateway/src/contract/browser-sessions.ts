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
    pdfs: z
      .array(z.string())
      .meta({ description: 'File names, `page-<unix ms>.pdf`, in the order they were made.' }),
    end_reason: SessionEndReason,
  })
  .meta({ id: 'SessionDetails' });

export const ContentFormat = z.enum(['html', 'text', 'markdown', 'links', 'metadata']).meta({
  id: 'ContentFormat',
  description:
    '`html`: the live DOM, serialised (form fields as typed); `text`: the visible text; `markdown`: GitHub-flavoured (headings, lists, links, tables, code); `links`: `[{url, text}]` with absolute URLs, in document order; `metadata`: title, description, lang, canonical URL and OpenGraph.',
});
export type ContentFormat = z.infer<typeof ContentFormat>;

const contentSelector = z.string().min(1).max(4096).meta({
  description:
    "Only that element's subtree (`metadata` still describes the whole document); must match within 5 s, else `400 element_not_found`.",
});
const mainContent = z.boolean().default(false).meta({
  description:
    'Keep only the main article (Readability); when it finds none, the whole page with `warnings: ["main_content_empty"]`.',
});

export const ContentRequest = z
  .object({
    formats: z
      .array(ContentFormat)
      .min(1)
      .max(5)
      .default(['markdown'])
      .meta({ description: 'What to answer; default `["markdown"]`.' }),
    selector: contentSelector.optional(),
    main_content: mainContent,
  })
  .meta({ id: 'ContentRequest' });

export const PageLink = z
  .object({ url: z.string().meta({ description: 'Absolute.' }), text: z.string() })
  .meta({ id: 'PageLink' });

export const PageMetadata = z
  .object({
    title: z.string(),
    description: z.string().nullable(),
    lang: z.string().nullable(),
    canonical_url: z.string().nullable(),
    og: z.record(z.string(), z.string()).meta({ description: 'OpenGraph properties without `og:`.' }),
  })
  .meta({ id: 'PageMetadata' });

const truncated = z.boolean().meta({
  description:
    'A text format (or `links`) was longer than `BROWSER_CONTENT_MAX_BYTES` (default 5 MB, UTF-8) and was cut on a character boundary.',
});
const warnings = z.array(z.string()).meta({ description: 'E.g. `main_content_empty`.' });
/** The formats of content and scrape, each present only when asked for. */
const formatFields = {
  html: z.string().optional(),
  text: z.string().optional(),
  markdown: z.string().optional(),
  links: z.array(PageLink).optional(),
  metadata: PageMetadata.optional(),
};

export const ContentResult = z
  .object({
    session_id: sessionId,
    url: z.string(),
    title: z.string(),
    ...formatFields,
    truncated,
    warnings,
  })
  .meta({ id: 'ContentResult' });

export const PdfRequest = z
  .object({
    format: z.enum(['A4', 'Letter', 'Legal']).default('A4'),
    landscape: z.boolean().default(false),
    print_background: z.boolean().default(true),
  })
  .meta({ id: 'PdfRequest' });

export const PdfResult = z
  .object({
    pdf: z.string().meta({ description: '`<session id>/page-<unix ms>.pdf`.' }),
    url: z.string().meta({ description: '`/api/browser/pdfs/<session id>/page-<unix ms>.pdf`.' }),
    pages: z.number().int().min(1),
  })
  .meta({ id: 'PdfResult' });

/** The longest `wait_for` may wait. */
export const SCRAPE_WAIT_FOR_MAX_MS = 30_000;

export const ScrapeRequest = z
  .object({
    url: NavigateRequest.shape.url,
    formats: z
      .array(z.enum(['html', 'text', 'markdown', 'links', 'metadata', 'screenshot', 'pdf']))
      .min(1)
      .max(7)
      .default(['markdown'])
      .meta({ description: 'As `content`, plus `screenshot` and `pdf`; default `["markdown"]`.' }),
    selector: contentSelector.optional(),
    main_content: mainContent,
    wait_for: z.string().min(1).max(4096).optional().meta({
      description: 'A CSS selector to wait for after the load, at most 30 s, else `400 element_not_found`.',
    }),
    viewport_width: viewportSide(viewport.defaultWidth),
    viewport_height: viewportSide(viewport.defaultHeight),
  })
  .meta({ id: 'ScrapeRequest' });

export const ScrapeResult = z
  .object({
    url: z.string().meta({ description: 'The final URL after redirects.' }),
    title: z.string(),
    http_status: z.number().int(),
    ...formatFields,
    screenshot_url: z.string().optional().meta({
      description:
        '`/api/browser/screenshots/<session id>/capture-<unix ms>.png`, when `screenshot` was asked for.',
    }),
    pdf_url: z.string().optional().meta({
      description: '`/api/browser/pdfs/<session id>/page-<unix ms>.pdf`, when `pdf` was asked for.',
    }),
    truncated,
    warnings,
  })
  .meta({ id: 'ScrapeResult' });

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
