import { SwitchboardError } from '@switchboard/errors';
import { relayUpgrade } from '../http/relay-proxy.js';
import { takeUpgrade } from '../http/upgrades.js';
import { CLOSE_POLICY_VIOLATION, CLOSE_TRY_AGAIN_LATER, RelayedWebSocket } from '../http/websocket-ending.js';
import { sessionIdParam } from '../sessions/session-id.js';
import { action, base, onOneSession } from '../contract/browser-sessions.js';
import { z } from 'zod';
import { route } from '../http/route.js';

/** A refusal that should pass by itself (the key store unreachable) invites a retry; others do not. */
const closeCodeFor = (reason: SwitchboardError): number =>
  reason.code === 'unavailable' ? CLOSE_TRY_AGAIN_LATER : CLOSE_POLICY_VIOLATION;

/**
 * A WebSocket to the session browser's
 * DevTools, proxied to the owning worker's relay after the same checks as every other call. The
 * API key stays here: the worker gets the caller's key id, as in gRPC metadata.
 */
export const browserSessionDevtoolsRoute = route({
  method: 'get',
  path: `${base}/{id}/devtools`,
  operationId: 'browserSessionDevtools',
  ...onOneSession,
  summary: 'Chrome DevTools Protocol (WebSocket)',
  description:
    "A WebSocket upgrade to the session browser's DevTools endpoint, proxied. Send the API key in the `Authorization` header: Playwright `chromium.connectOverCDP(devtools_url, {headers})`, Puppeteer `puppeteer.connect({browserWSEndpoint: devtools_url, headers})`. DevTools traffic counts as session activity. A session has at most `BROWSER_MAX_DEVTOOLS_CONNECTIONS` (default 8) DevTools connections open at once, however many gateways they come through: one more is `429 rate_limited`, and the open ones keep working. `Target.createTarget` past the session's tab bound (`BROWSER_MAX_TABS`, default 10) gets a CDP error.",
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
  // invalid_request: a plain GET, without the upgrade.
  errors: [...action, 'invalid_request'],
  async serve({ req, res, deps }) {
    const id = sessionIdParam(req);
    const { ctx } = res.locals;
    const devtoolsAddress = await deps.clients.browser.devtoolsAddress(id, ctx.key?.id ?? '');
    const upgrade = takeUpgrade(req);
    if (!upgrade) {
      throw new SwitchboardError('invalid_request', {
        message: 'This endpoint is a WebSocket (Chrome DevTools Protocol); connect with an upgrade request.',
      });
    }
    const socket = new RelayedWebSocket(upgrade.socket);
    // Revoked key, stale key store, address no longer allowed: the client gets a close frame
    // naming the code a new request would get (or, before the upgrade completed, a cut).
    deps.live.track(res, ctx.recheckAccess, (reason) => socket.close(closeCodeFor(reason), reason.code));
    relayUpgrade(deps, req, upgrade, {
      origin: devtoolsAddress,
      path: `/devtools/${id}`,
      keyId: ctx.key?.id ?? '',
      requestId: ctx.requestId,
      socket,
    });
  },
});
