/**
 * The live view (§6b): links to a session's picture (owner's calls and the admin's), the page a
 * link opens (no key: the token is the credential), its script and style, and its WebSocket,
 * relayed to the worker that owns the session.
 */
import type { Response } from 'express';
import { z } from 'zod';
import { SwitchboardError } from '@switchboard/errors';
import { adminSurface } from '../contract/administration.js';
import { action, base, onOneSession, onSession, SessionPath, tag } from '../contract/browser-sessions.js';
import { adminErrors, json, jsonBodyErrors, workerErrors } from '../contract/responses.js';
import { relayUpgrade } from '../http/relay-proxy.js';
import { takeUpgrade } from '../http/upgrades.js';
import { RelayedWebSocket } from '../http/websocket-ending.js';
import { perApp, route, type Route, type RouteDeps } from '../http/route.js';
import { asset, contentSecurityPolicy, publicFile, staticFileRoute } from '../http/static-files.js';
import { sessionIdParam } from '../sessions/session-id.js';
import { CreateLiveLinkRequest, LiveLinkCreated } from './contract.js';
import type { LiveLink, LiveLinks, LiveMode } from './link-store.js';
import type { SessionRoute } from '../clients/session-router.js';
import { OpenViewers } from './open-viewers.js';

/** The page runs its own script and style only, draws frames from blob: URLs and talks to this gateway. */
const livePolicy = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' blob: data:",
  'connect-src': "'self'",
});
const LIVE_PAGE = publicFile('live/index.html');

const storeOf = (deps: RouteDeps): LiveLinks => {
  if (!deps.liveLinks) throw new SwitchboardError('unavailable', { message: 'Live view is unavailable.' });
  return deps.liveLinks;
};

const viewersOf = perApp((deps) => new OpenViewers(() => deps.liveLinks, deps.clients.browser, deps.logger));

async function issue(
  deps: RouteDeps,
  origin: string,
  link: { sessionId: string; ownerKeyId: string; mode: LiveMode; ttlS: number },
) {
  const issued = await storeOf(deps).create(link);
  return {
    live_id: issued.link.live_id,
    url: `${origin}/live/${issued.token}`,
    mode: issued.link.mode,
    expires_at: new Date(issued.link.expires_at_ms).toISOString(),
  };
}

const createDescription =
  "A capability link to a page that shows the session's current tab as it changes (Chromium's screencast), following the tab the session works in; in `interact` mode the viewer's clicks, typing and scrolling reach the page (and count as session activity; watching does not). Anyone holding the URL can open it without a key until `expires_at`, until revoked, or until the session ends. A link reaches that one session's picture and input, never DevTools or the API.";

export const createLiveLinkRoute = route({
  method: 'post',
  path: `${base}/{id}/live`,
  operationId: 'createBrowserLiveLink',
  ...onOneSession,
  summary: 'Create a live-view link',
  description: createDescription,
  body: CreateLiveLinkRequest,
  bodyOptional: true,
  responses: {
    201: { description: 'The link (its token is shown only here).', content: json(LiveLinkCreated) },
  },
  errors: [...action, ...jsonBodyErrors],
  async handle({ req, res, body, deps }) {
    const id = sessionIdParam(req);
    const keyId = res.locals.ctx.key?.id ?? '';
    // 404 for someone else's session, 410 for an ended one: the same checks as DevTools.
    await deps.clients.browser.devtoolsAddress(id, keyId);
    return issue(deps, deps.originOf(req), {
      sessionId: id,
      ownerKeyId: keyId,
      mode: body.mode,
      ttlS: body.ttl_s,
    });
  },
});

export const revokeLiveLinkRoute = route({
  method: 'delete',
  path: `${base}/{id}/live/{live_id}`,
  operationId: 'revokeBrowserLiveLink',
  tag,
  auth: 'apiKey',
  params: SessionPath.extend({ live_id: z.string().meta({ description: 'The link, as created.' }) }),
  summary: 'Revoke a live-view link',
  description: 'The link stops working at once and its open viewers are disconnected within 2 s.',
  responses: { 204: { description: 'Revoked.' } },
  errors: [...onSession, 'not_found'],
  async serve({ req, res, deps }) {
    const id = sessionIdParam(req);
    await deps.clients.browser.route(id, { keyId: res.locals.ctx.key?.id ?? '' });
    if (!(await storeOf(deps).revoke(id, String(req.params.live_id))))
      throw new SwitchboardError('not_found', { message: 'The session has no such live-view link.' });
    res.status(204).end();
  },
});

export const adminLiveLinkRoute = route({
  method: 'post',
  path: '/admin/api/browser/sessions/{id}/live',
  operationId: 'createAnyBrowserLiveLink',
  ...adminSurface,
  summary: "Create a live-view link to any key's browser session",
  description: `As the owner's call (the dashboard's "Live view"). ${createDescription}`,
  params: z.object({ id: z.uuid().meta({ description: 'The browser session id (UUID v4), of any key.' }) }),
  body: CreateLiveLinkRequest,
  bodyOptional: true,
  responses: { 201: { description: 'The link.', content: json(LiveLinkCreated) } },
  errors: [
    ...adminErrors,
    ...jsonBodyErrors,
    'session_not_found',
    'session_closed',
    'session_expired',
    ...workerErrors,
  ],
  async handle({ req, body, deps }) {
    const id = sessionIdParam(req);
    const session = deps.clients.browser.listSessions().find((s) => s.session_id === id);
    if (!session) throw new SwitchboardError('session_not_found');
    await deps.clients.browser.devtoolsAddress(id, session.owner_key_id);
    return issue(deps, deps.originOf(req), {
      sessionId: id,
      ownerKeyId: session.owner_key_id,
      mode: body.mode,
      ttlS: body.ttl_s,
    });
  },
});

const TokenPath = z.object({
  token: z.string().max(200).meta({ description: 'The token of a link, as in its `url`.' }),
});

/** The headers every live-view answer carries: its policy, no referrer, never cached. */
function liveHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', livePolicy);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}

/** A page with no script that says why a link opens nothing. */
function refusalPage(res: Response, status: number, text: string): void {
  liveHeaders(res);
  res
    .status(status)
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Live view</title>` +
        `<link rel="stylesheet" href="/live-assets/viewer.css"></head>` +
        `<body><main class="refused"><h1>Live view</h1><p id="status">${text}</p></main></body></html>`,
    );
}

const NOT_VALID = 'This live-view link is not valid: it expired, was revoked or never existed.';
const ENDED = 'The browser session has ended.';

/** The link and its session's route (absent once the registry forgot it); null when the link does not hold. */
async function linkOf(
  deps: RouteDeps,
  token: string,
): Promise<{ link: LiveLink; owning: SessionRoute | undefined } | null> {
  const link = await storeOf(deps).resolve(token);
  if (!link) return null;
  try {
    return { link, owning: await deps.clients.browser.route(link.session_id, { keyId: link.owner_key_id }) };
  } catch (error) {
    if (error instanceof SwitchboardError && error.code === 'session_not_found')
      return { link, owning: undefined };
    throw error;
  }
}

const html = (description: string) => ({
  description,
  content: { 'text/html; charset=utf-8': { schema: z.string() } },
});

export const livePageRoute = route({
  method: 'get',
  path: '/live/{token}',
  operationId: 'browserLiveView',
  tag,
  auth: 'public',
  params: TokenPath,
  summary: 'Live view (web page)',
  description:
    "The page a live-view link opens: no API key (the token is the credential). It shows the session's tab as it changes and, for an `interact` link, sends clicks, typing and scrolling to it. Served under a strict Content-Security-Policy, `Referrer-Policy: no-referrer` and `Cache-Control: no-store`.",
  responses: { 200: html('The viewer page.') },
  // A browser (Accept: text/html) gets them as a page of their own that says why.
  errors: ['not_found', 'session_closed', 'unavailable'],
  async serve({ req, res, deps }, next) {
    const found = await linkOf(deps, String(req.params.token));
    const asPage = req.accepts(['application/json', 'text/html']) === 'text/html';
    if (!found) {
      if (asPage) return refusalPage(res, 404, NOT_VALID);
      throw new SwitchboardError('not_found', { message: NOT_VALID });
    }
    if (found.owning?.status !== 'active') {
      if (asPage) return refusalPage(res, 410, ENDED);
      throw new SwitchboardError('session_closed', { message: ENDED });
    }
    liveHeaders(res);
    res.sendFile(LIVE_PAGE, { headers: { 'Content-Type': 'text/html; charset=utf-8' } }, (error) => {
      if (error) next(error);
    });
  },
});

export const liveStreamRoute = route({
  method: 'get',
  path: '/live/{token}/stream',
  operationId: 'browserLiveViewStream',
  tag,
  auth: 'public',
  params: TokenPath,
  summary: 'Live view frames and input (WebSocket)',
  description:
    "The live-view page's WebSocket, relayed to the worker that owns the session. Binary messages are JPEG frames (the last one again at least every 2 s); text messages are JSON (`hello` with the mode, `ended`). An `interact` link may send `mouse`, `wheel` and `key` messages (coordinates as fractions of the picture); a `view` link's input is ignored. Closes with 4001 (revoked), 4002 (expired) or 4003 (session ended).",
  headers: z.object({
    Connection: z.literal('Upgrade'),
    Upgrade: z.literal('websocket'),
    'Sec-WebSocket-Key': z.string(),
    'Sec-WebSocket-Version': z.literal('13'),
  }),
  responses: {
    101: {
      gatewayHeaders: false,
      description: 'Switching Protocols: frames and input messages follow.',
    },
  },
  errors: ['invalid_request', 'not_found', 'session_closed', 'unavailable'],
  async serve({ req, res, deps }) {
    const found = await linkOf(deps, String(req.params.token));
    if (!found) throw new SwitchboardError('not_found', { message: NOT_VALID });
    const { link, owning } = found;
    if (owning?.status !== 'active') throw new SwitchboardError('session_closed', { message: ENDED });
    const upgrade = takeUpgrade(req);
    if (!upgrade) throw new SwitchboardError('invalid_request', { message: 'This endpoint is a WebSocket.' });
    const socket = new RelayedWebSocket(upgrade.socket);
    const closed = new Promise((resolve) => upgrade.socket.once('close', resolve));
    viewersOf(deps).add(link, socket, closed);
    // The worker learns the owner and the mode from the gateway, never from the viewer.
    relayUpgrade(deps, req, upgrade, {
      origin: owning.record.devtools_address,
      path: `/live/${link.session_id}`,
      keyId: link.owner_key_id,
      requestId: res.locals.ctx.requestId,
      socket,
      headers: { 'x-switchboard-live-mode': link.mode },
    });
  },
});

/** No key: the page and what it loads (the token is the credential for the stream). */
export const livePublicRoutes: readonly Route[] = [
  staticFileRoute({
    path: '/live-assets/viewer.js',
    operationId: 'browserLiveViewScript',
    tag,
    kind: 'script',
    summary: 'The script of the live-view page',
    serves: asset(publicFile('live/viewer.js')),
  }),
  staticFileRoute({
    path: '/live-assets/viewer.css',
    operationId: 'browserLiveViewStyle',
    tag,
    kind: 'style',
    summary: 'The style sheet of the live-view page',
    serves: asset(publicFile('live/viewer.css')),
  }),
  livePageRoute,
  liveStreamRoute,
];

/** Behind an API key: the session's owner makes and revokes its links. */
export const liveKeyRoutes: readonly Route[] = [createLiveLinkRoute, revokeLiveLinkRoute];
