import type { Response } from 'express';
import { callContext } from '../clients/call-context.js';
import { webSocketOrigin } from '../http/public-origin.js';
import { readJson, route, type RouteDeps } from '../http/route.js';
import { sessionIdParam as sessionId } from '../sessions/session-id.js';
import { closedView, detailsView } from '../sessions/session-view.js';
import {
  CaptureResult,
  InputRequest,
  InputResult,
  NavigateRequest,
  NavigateResult,
  SessionClosed,
  SessionCreated,
  SessionDetails,
  SubmitRequest,
  SubmitResult,
  action,
  base,
  onOneSession,
  onSession,
  sessionSurface,
  CreateSessionRequest,
} from '../contract/browser-sessions.js';
import { json, jsonBodyErrors, keyErrors, workerErrors } from '../contract/responses.js';
import { meteringOf } from '../usage/metering-of.js';
import { browserContentRoutes } from './browser-content.js';

export const createBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/create`,
  operationId: 'createBrowserSession',
  ...sessionSurface,
  summary: 'Create a browser session',
  description:
    "Takes a Chromium process from the pre-launched pool. The session and its screenshots belong to the key id that created it. Too many sessions for the key's tier → `429 session_limit`; no browser capacity anywhere → `503 no_capacity`, and so is one more session for a key that already holds its share of the cluster's browsers (`BROWSER_KEY_CAPACITY_SHARE`, default half) while other keys are being turned away — both with `Retry-After`.",
  body: CreateSessionRequest,
  bodyOptional: true,
  responses: { 201: { description: 'The session.', content: json(SessionCreated) } },
  errors: [
    ...keyErrors,
    ...jsonBodyErrors,
    'quota_exceeded',
    'session_limit',
    'no_capacity',
    ...workerErrors,
  ],
  async handle({ req, res, body, deps }) {
    // A session's seconds are recorded when it ends (usage/session-usage.ts); none start once spent.
    await meteringOf(deps).admit(res, {
      capability: 'browser',
      check: ['session_seconds'],
      deadlineMs: deps.config.workers.browser.deadlineMs,
    });
    const session = await deps.clients.browser.create(
      { viewport_width: body.viewport_width, viewport_height: body.viewport_height },
      sessionLimitOf(res, deps),
      callContext(res),
    );
    return {
      session_id: session.session_id,
      status: session.status as 'active',
      created_at: session.created_at,
      devtools_url: `${webSocketOrigin(deps.originOf(req))}/api/browser/session/${session.session_id}/devtools`,
    };
  },
});

/** How many sessions the caller's tier may hold at once (a scrape's own session counts too). */
export function sessionLimitOf(res: Response, deps: RouteDeps): number {
  return deps.config.tiers[res.locals.ctx.key?.tier ?? 'basic'].browser_sessions;
}

export const navigateBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/navigate`,
  operationId: 'navigateBrowserSession',
  ...onOneSession,
  summary: 'Open a URL',
  description:
    'Answers after the `load` event. Non-http(s) URLs and hosts that resolve to loopback, private, link-local, CGNAT, metadata, multicast or cluster-internal addresses (at connect time, after every redirect, for sub-resources too) → `400 url_not_allowed`. DNS failure, refused connection or a page that never loads → `502 navigation_failed`.',
  body: NavigateRequest,
  responses: { 200: { description: 'The page loaded.', content: json(NavigateResult) } },
  errors: [...action, ...jsonBodyErrors, 'url_not_allowed', 'navigation_failed'],
  async handle({ req, res, body, deps }) {
    const id = sessionId(req);
    const page = await deps.clients.browser.navigate({ session_id: id, url: body.url }, callContext(res));
    return { session_id: page.session_id, url: page.url, title: page.title, http_status: page.http_status };
  },
});

export const inputBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/input`,
  operationId: 'inputBrowserSession',
  ...onOneSession,
  summary: 'Type text into an element',
  body: InputRequest,
  responses: { 200: { description: 'The text was typed.', content: json(InputResult) } },
  errors: [...action, ...jsonBodyErrors, 'element_not_found'],
  async handle({ req, res, body, deps }) {
    const id = sessionId(req);
    const { selector, text } = body;
    const done = await deps.clients.browser.input({ session_id: id, selector, text }, callContext(res));
    return { session_id: done.session_id, selector: done.selector };
  },
});

export const submitBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/submit`,
  operationId: 'submitBrowserSession',
  ...onOneSession,
  summary: 'Submit a form',
  body: SubmitRequest,
  responses: {
    200: { description: 'The form was submitted and any navigation settled.', content: json(SubmitResult) },
  },
  errors: [...action, ...jsonBodyErrors, 'element_not_found', 'url_not_allowed', 'navigation_failed'],
  async handle({ req, res, body, deps }) {
    const id = sessionId(req);
    const done = await deps.clients.browser.submit(
      { session_id: id, selector: body.selector },
      callContext(res),
    );
    return { session_id: done.session_id, url: done.url };
  },
});

export const captureBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/capture`,
  operationId: 'captureBrowserSession',
  ...onOneSession,
  summary: 'Take a screenshot',
  description: 'No body. Screenshots outlive the session (retention is configuration, default 7 days).',
  responses: { 200: { description: 'The screenshot was stored.', content: json(CaptureResult) } },
  errors: [...action, 'quota_exceeded'],
  receive: readJson,
  async handle({ req, res, deps }) {
    const metered = await meteringOf(deps).admit(res, {
      capability: 'browser',
      check: ['captures'],
      deadlineMs: deps.config.workers.browser.deadlineMs,
    });
    const { screenshot } = await deps.clients.browser.capture(sessionId(req), callContext(res));
    await metered.record({ captures: 1 });
    return { screenshot, url: `/api/browser/screenshots/${screenshot}` };
  },
});

export const getBrowserSessionRoute = route({
  method: 'get',
  path: `${base}/{id}/details`,
  operationId: 'getBrowserSession',
  ...onOneSession,
  summary: 'Describe a session',
  description: 'A closed or expired session still answers, with that status, for an hour.',
  responses: { 200: { description: 'The session.', content: json(SessionDetails) } },
  errors: onSession,
  handle: async ({ req, res, deps }) =>
    detailsView(await deps.clients.browser.details(sessionId(req), callContext(res))),
});

export const closeBrowserSessionRoute = route({
  method: 'post',
  path: `${base}/{id}/close`,
  operationId: 'closeBrowserSession',
  ...onOneSession,
  summary: 'Close a session',
  description: 'No body. Closing a closed session again is also `200`.',
  responses: {
    200: { description: 'The session is closed; its browser process is gone.', content: json(SessionClosed) },
  },
  errors: onSession,
  receive: readJson,
  async handle({ req, res, deps }) {
    return closedView(await deps.clients.browser.close(sessionId(req), callContext(res)));
  },
});

/** Browser sessions: every call goes to the worker that owns the session. */
export const browserRoutes = [
  createBrowserSessionRoute,
  navigateBrowserSessionRoute,
  inputBrowserSessionRoute,
  submitBrowserSessionRoute,
  captureBrowserSessionRoute,
  ...browserContentRoutes,
  getBrowserSessionRoute,
  closeBrowserSessionRoute,
];
