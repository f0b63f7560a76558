import type { Request, Router } from 'express';
import { exactRouter } from '../http/router.js';
import type { Session, SessionRouter } from '../sessions/session-router.js';
import { callContext } from '../clients/call-context.js';
import type { TierPolicies } from '@switchboard/keys';
import { jsonBody } from '../http/json-body.js';
import { webSocketOrigin } from '../http/public-origin.js';
import { validate } from '../http/validate.js';
import { sessionIdParam as sessionId } from './session-id.js';
import {
  CreateSessionRequest,
  InputRequest,
  NavigateRequest,
  SubmitRequest,
} from '../contract/browser-sessions.js';

function detailsView(session: Session) {
  return {
    session_id: session.session_id,
    status: session.status,
    created_at: session.created_at,
    // Nothing committed yet reads as null rather than an empty string.
    current_url: session.current_url || null,
    history: session.history,
    screenshots: session.screenshots,
    // Empty while the session is active.
    end_reason: session.end_reason || null,
  };
}

/** /api/browser/session/* (API.md §6): every call goes to the worker that owns the session. */
export function browserRouter(
  browser: SessionRouter,
  tiers: TierPolicies,
  bodyLimitBytes: number,
  /** The origin clients reach the gateway at, for `devtools_url` (see http/public-origin.ts). */
  originOf: (req: Request) => string,
): Router {
  const router = exactRouter();
  const body = jsonBody(bodyLimitBytes);
  const base = '/api/browser/session';

  router.post(`${base}/create`, body, async (req, res) => {
    const input = validate(CreateSessionRequest, req.body);
    const tier = res.locals.ctx.key?.tier ?? 'basic';
    const session = await browser.create(
      { viewport_width: input.viewport_width, viewport_height: input.viewport_height },
      tiers[tier].browser_sessions,
      callContext(res),
    );
    res.status(201).json({
      session_id: session.session_id,
      status: session.status,
      created_at: session.created_at,
      devtools_url: `${webSocketOrigin(originOf(req))}/api/browser/session/${session.session_id}/devtools`,
    });
  });

  router.post(`${base}/:id/navigate`, body, async (req, res) => {
    const id = sessionId(req);
    const { url } = validate(NavigateRequest, req.body);
    const page = await browser.navigate({ session_id: id, url }, callContext(res));
    res.json({
      session_id: page.session_id,
      url: page.url,
      title: page.title,
      http_status: page.http_status,
    });
  });

  router.post(`${base}/:id/input`, body, async (req, res) => {
    const id = sessionId(req);
    const { selector, text } = validate(InputRequest, req.body);
    const done = await browser.input({ session_id: id, selector, text }, callContext(res));
    res.json({ session_id: done.session_id, selector: done.selector });
  });

  router.post(`${base}/:id/submit`, body, async (req, res) => {
    const id = sessionId(req);
    const { selector } = validate(SubmitRequest, req.body);
    const done = await browser.submit({ session_id: id, selector }, callContext(res));
    res.json({ session_id: done.session_id, url: done.url });
  });

  router.post(`${base}/:id/capture`, body, async (req, res) => {
    const id = sessionId(req);
    const { screenshot } = await browser.capture(id, callContext(res));
    res.json({ screenshot, url: `/api/browser/screenshots/${screenshot}` });
  });

  router.get(`${base}/:id/details`, async (req, res) => {
    res.json(detailsView(await browser.details(sessionId(req), callContext(res))));
  });

  router.post(`${base}/:id/close`, body, async (req, res) => {
    const session = await browser.close(sessionId(req), callContext(res));
    res.json({ session_id: session.session_id, status: session.status });
  });

  return router;
}
