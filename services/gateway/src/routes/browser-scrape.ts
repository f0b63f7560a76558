// One call, one page: a session made for it, read, and closed before the answer.
import type { Meter } from '@switchboard/usage';
import { callContext } from '../clients/call-context.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import {
  SCRAPE_WAIT_FOR_MAX_MS,
  ScrapeRequest,
  ScrapeResult,
  sessionSurface,
  type ContentFormat,
} from '../contract/browser-sessions.js';
import { route } from '../http/route.js';
import { meteringOf } from '../usage/metering-of.js';
import { sessionLimitOf } from './browser.js';
import { contentFormats, pdfUrl } from './browser-content.js';

const CONTENT_FORMATS: readonly string[] = ['html', 'text', 'markdown', 'links', 'metadata'];

export const browserScrapeRoute = route({
  method: 'post',
  path: '/api/browser/scrape',
  operationId: 'scrapeUrl',
  ...sessionSurface,
  summary: 'Scrape a URL in one call',
  description:
    "A session made for this one call (it counts against the tier's session limit while it runs: `429 session_limit`), the URL opened through the same address guard as `navigate` (`400 url_not_allowed`, `502 navigation_failed`), `wait_for` waited for (at most 30 s, else `400 element_not_found`), the asked formats read as `content` reads them, a screenshot and a PDF taken when asked for (kept like a session's), and the session closed before the answer, whatever happened.",
  body: ScrapeRequest,
  responses: { 200: { description: 'The page.', content: json(ScrapeResult) } },
  errors: [
    ...keyErrors,
    ...jsonBodyErrors,
    'quota_exceeded',
    'session_limit',
    'no_capacity',
    'url_not_allowed',
    'navigation_failed',
    'element_not_found',
    ...workerErrors,
  ],
  async handle({ res, body, deps }) {
    const wantsScreenshot = body.formats.includes('screenshot');
    const wantsPdf = body.formats.includes('pdf');
    const metered = await meteringOf(deps).admit(res, {
      capability: 'browser',
      check: [
        'scrapes',
        'session_seconds',
        ...(wantsScreenshot ? (['captures'] as Meter[]) : []),
        ...(wantsPdf ? (['pdfs'] as Meter[]) : []),
      ],
      deadlineMs: deps.config.workers.browser.deadlineMs,
    });
    const ctx = callContext(res);
    const browser = deps.clients.browser;
    const session = await browser.create(
      { viewport_width: body.viewport_width, viewport_height: body.viewport_height },
      sessionLimitOf(res, deps),
      ctx,
    );
    const id = session.session_id;
    try {
      const page = await browser.navigate({ session_id: id, url: body.url }, ctx);
      const formats = body.formats.filter((f): f is ContentFormat => CONTENT_FORMATS.includes(f));
      const content =
        formats.length > 0 || body.wait_for
          ? await browser.content(
              {
                session_id: id,
                // Only waiting: the cheapest format, whose answer is dropped.
                formats: formats.length > 0 ? formats : ['metadata'],
                selector: body.selector ?? '',
                main_content: body.main_content,
                wait_for: body.wait_for ?? '',
                wait_for_timeout_ms: SCRAPE_WAIT_FOR_MAX_MS,
              },
              ctx,
            )
          : undefined;
      const screenshot = wantsScreenshot ? (await browser.capture(id, ctx)).screenshot : undefined;
      const pdf = wantsPdf
        ? (await browser.pdf({ session_id: id, print_background: true }, ctx)).pdf
        : undefined;
      const answer = {
        url: content?.url || page.url,
        title: content?.title ?? page.title,
        http_status: page.http_status,
        ...(content ? contentFormats(formats, content) : {}),
        ...(screenshot ? { screenshot_url: `/api/browser/screenshots/${screenshot}` } : {}),
        ...(pdf ? { pdf_url: pdfUrl(pdf) } : {}),
        truncated: content?.truncated ?? false,
        warnings: content?.warnings ?? [],
      };
      await metered.record({
        scrapes: 1,
        ...(screenshot ? { captures: 1 } : {}),
        ...(pdf ? { pdfs: 1 } : {}),
      });
      deps.events.publish('browser.scrape.completed', {
        session_id: id,
        key_id: ctx.keyId,
        data: {
          session_id: id,
          url: answer.url,
          title: answer.title,
          http_status: answer.http_status,
          formats: body.formats,
          screenshot_url: answer.screenshot_url ?? null,
          pdf_url: answer.pdf_url ?? null,
          truncated: answer.truncated,
          updated_at: new Date().toISOString(),
        },
      });
      return answer;
    } finally {
      // Never left open: the key's session limit is free again once the answer is out.
      await browser
        .close(id, ctx)
        .catch((error: unknown) =>
          deps.logger.warn({ err: error, session_id: id }, 'scrape session not closed'),
        );
    }
  },
});
