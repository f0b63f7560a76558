import type { IncomingMessage } from 'node:http';
import { Agent as TlsAgent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { SwitchboardError } from '@switchboard/errors';
import { CLUSTER_SECRET_KEY, parseTarget, watchTlsFiles } from '@switchboard/grpc';
import { takeUpgrade } from '../http/upgrades.js';
import { CLOSE_POLICY_VIOLATION, CLOSE_TRY_AGAIN_LATER, RelayedWebSocket } from '../http/websocket-ending.js';
import { sessionIdParam } from '../sessions/session-id.js';
import { action, base, onOneSession } from '../contract/browser-sessions.js';
import { z } from 'zod';
import { perApp, route, type RouteDeps } from '../http/route.js';

/** Where an accepted DevTools upgrade goes (set by the route, read by the proxy). */
interface DevtoolsTarget {
  /** The owning worker's relay, host:port. */
  origin: string;
  path: string;
  keyId: string;
  requestId: string;
  socket: RelayedWebSocket;
}

/** A refusal that should pass by itself (the key store unreachable) invites a retry; others do not. */
const closeCodeFor = (reason: SwitchboardError): number =>
  reason.code === 'unavailable' ? CLOSE_TRY_AGAIN_LATER : CLOSE_POLICY_VIOLATION;

const targets = new WeakMap<IncomingMessage, DevtoolsTarget>();

/**
 * With gRPC TLS on, the relays speak TLS with the same certificates: an agent that trusts the
 * workers' CA, presents the gateway's certificate, and checks the name the gRPC clients check
 * (GRPC_TLS_SERVER_NAME, else BROWSER_ADDR's host: relays are dialled by pod IP). Renewed files
 * reach the connections made from then on.
 */
function relayAgent(config: RouteDeps['config']): TlsAgent | undefined {
  const tls = config.workerTls;
  if (tls === undefined) return undefined;
  const service = parseTarget(config.workers.browser.address).host;
  const servername = tls.serverName ?? (isIP(service) === 0 ? service : undefined);
  const files = watchTlsFiles(tls);
  const agent = new TlsAgent({ ...files.current(), ...(servername === undefined ? {} : { servername }) });
  // Node's agent reads its options at each new connection.
  files.onChange((pems) => Object.assign(agent.options, pems));
  return agent;
}

const proxyOf = perApp(({ logger, config }) => {
  const clusterSecret = config.clusterSecret;
  const agent = relayAgent(config);
  const scheme = agent === undefined ? 'http' : 'https';
  return createProxyMiddleware<IncomingMessage>({
    ws: true,
    changeOrigin: true,
    ...(agent === undefined ? {} : { agent }),
    router: (req) => `${scheme}://${targets.get(req)!.origin}`,
    pathRewrite: (_path, req) => targets.get(req)!.path,
    on: {
      proxyReqWs: (proxyReq, req) => {
        const target = targets.get(req)!;
        proxyReq.removeHeader('authorization');
        proxyReq.removeHeader('cookie');
        proxyReq.setHeader('x-switchboard-key-id', target.keyId);
        proxyReq.setHeader('x-request-id', target.requestId);
        // The relay refuses upgrades without it, so only a gateway can claim a key id there.
        proxyReq.setHeader(CLUSTER_SECRET_KEY, clusterSecret);
        // Runs before http-proxy's own listener: closing later must stop the upstream side too.
        proxyReq.once('upgrade', (_res: IncomingMessage, upstream: Duplex) =>
          target.socket.attachUpstream(upstream),
        );
      },
      error: (error, _req, socket) => {
        logger.warn({ err: error }, 'devtools proxy failed');
        if ('destroy' in socket) socket.destroy();
      },
    },
    logger: {
      info: () => undefined,
      warn: (m: unknown) => logger.warn({ detail: m }, 'devtools proxy'),
      error: (m: unknown) => logger.warn({ detail: m }, 'devtools proxy'),
    },
  });
});

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
    targets.set(req, {
      origin: devtoolsAddress,
      path: `/devtools/${id}`,
      keyId: ctx.key?.id ?? '',
      requestId: ctx.requestId,
      socket,
    });
    // Revoked key, stale key store, address no longer allowed: the client gets a close frame
    // naming the code a new request would get (or, before the upgrade completed, a cut).
    deps.live.track(res, ctx.recheckAccess, (reason) => socket.close(closeCodeFor(reason), reason.code));
    proxyOf(deps).upgrade(req, upgrade.socket as never, upgrade.head);
  },
});
