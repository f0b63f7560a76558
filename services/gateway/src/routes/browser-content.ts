// Reading a session's page (content) and printing it (pdf): scraping without a DevTools client.
import type { ContentResponse__Output } from '@switchboard/contracts';
import { callContext } from '../clients/call-context.js';
import { route } from '../http/route.js';
import { sessionIdParam as sessionId } from '../sessions/session-id.js';
import {
  ContentRequest,
  ContentResult,
  PdfRequest,
  PdfResult,
  action,
  base,
  onOneSession,
  type ContentFormat,
} from '../contract/browser-sessions.js';
import { json, jsonBodyErrors } from '../contract/responses.js';
import { meteringOf } from '../usage/metering-of.js';

/**
 * The asked formats of a worker's answer, in the API's shape: the RPC carries every field (proto3
 * has no absent strings), so the formats nobody asked for are left out here, and metadata fields
 * the page does not have (empty strings on the wire) are null.
 */
export function contentFormats(formats: readonly ContentFormat[], content: ContentResponse__Output) {
  const asked = new Set(formats);
  const metadata = content.metadata;
  return {
    ...(asked.has('html') ? { html: content.html } : {}),
    ...(asked.has('text') ? { text: content.text } : {}),
    ...(asked.has('markdown') ? { markdown: content.markdown } : {}),
    ...(asked.has('links') ? { links: content.links.map(({ url, text }) => ({ url, text })) } : {}),
    ...(asked.has('metadata') && metadata
      ? {
          metadata: {
            title: metadata.title,
            description: metadata.description || null,
            lang: metadata.lang || null,
            canonical_url: metadata.canonical_url || null,
            og: { ...metadata.og },
          },
        }
      : {}),
  };
}

export const contentBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/content`,
  operationId: 'getBrowserSessionContent',
  ...onOneSession,
  summary: 'Read the page',
  description:
    'The page as it is now (after any typing, clicking or scripting, so a logged-in session can be scraped), in the asked formats. Each text format is capped at `BROWSER_CONTENT_MAX_BYTES` (default 5 MB, UTF-8), cut on a character boundary with `truncated: true`. A `selector` that matches nothing within 5 s → `400 element_not_found`.',
  body: ContentRequest,
  bodyOptional: true,
  responses: { 200: { description: 'The page content.', content: json(ContentResult) } },
  errors: [...action, ...jsonBodyErrors, 'element_not_found'],
  async handle({ req, res, body, deps }) {
    const id = sessionId(req);
    const content = await deps.clients.browser.content(
      {
        session_id: id,
        formats: body.formats,
        selector: body.selector ?? '',
        main_content: body.main_content,
      },
      callContext(res),
    );
    return {
      session_id: content.session_id,
      url: content.url,
      title: content.title,
      ...contentFormats(body.formats, content),
      truncated: content.truncated,
      warnings: content.warnings,
    };
  },
});

export const pdfBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/pdf`,
  operationId: 'printBrowserSessionPdf',
  ...onOneSession,
  summary: 'Print the page as a PDF',
  description:
    "Chromium's own printing of the page as it is now. The PDF is kept like a screenshot (after the session ends, for the screenshots' retention) and served to the session's owner only.",
  body: PdfRequest,
  bodyOptional: true,
  responses: { 200: { description: 'The PDF was stored.', content: json(PdfResult) } },
  errors: [...action, ...jsonBodyErrors, 'quota_exceeded'],
  async handle({ req, res, body, deps }) {
    const metered = await meteringOf(deps).admit(res, {
      capability: 'browser',
      check: ['pdfs'],
      deadlineMs: deps.config.workers.browser.deadlineMs,
    });
    const printed = await deps.clients.browser.pdf(
      {
        session_id: sessionId(req),
        format: body.format,
        landscape: body.landscape,
        print_background: body.print_background,
      },
      callContext(res),
    );
    await metered.record({ pdfs: 1 });
    return { pdf: printed.pdf, url: pdfUrl(printed.pdf), pages: printed.pages };
  },
});

/** Where a stored PDF (`<session id>/page-<unix ms>.pdf`) is downloaded. */
export const pdfUrl = (pdf: string): string => `/api/browser/pdfs/${pdf}`;

export const browserContentRoutes = [contentBrowserSessionRoute, pdfBrowserSessionRoute];
