import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request, Router } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { SwitchboardError } from '@switchboard/errors';
import { CLUSTER_SECRET_KEY } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import { exactRouter } from '../http/router.js';
import type { DevtoolsLocator } from '../sessions/session-router.js';
import type { LiveRequests } from '../auth/live-requests.js';
import { takeUpgrade } from '../http/upgrades.js';
import { CLOSE_POLICY_VIOLATION, CLOSE_TRY_AGAIN_LATER, RelayedWebSocket } from '../http/websocket-ending.js';
import { sessionIdParam } from './session-id.js';

/** Where an accepted DevTools upgrade goes (set by the route, read by the proxy). */
interface DevtoolsTarget {
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
 * `GET /api/browser/session/{id}/devtools` (API.md §6): a WebSocket to the session browser's
 * DevTools, proxied to the owning worker's relay after the same checks as every other call. The
 * API key stays here: the worker gets the caller's key id, as in gRPC metadata.
 */
export function browserDevtoolsRouter(
  sessions: DevtoolsLocator,
  logger: Logger,
  clusterSecret: string,
  /** Open DevTools sockets, closed once a new request with their key would be refused. */
  live: LiveRequests,
): Router {
  const proxy = createProxyMiddleware<IncomingMessage>({
    ws: true,
    changeOrigin: true,
    router: (req) => targets.get(req)!.origin,
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

  const router = exactRouter();
  router.get('/api/browser/session/:id/devtools', async (req: Request, res) => {
    const id = sessionIdParam(req);
    const { ctx } = res.locals;
    const devtoolsAddress = await sessions.devtoolsAddress(id, ctx.key?.id ?? '');
    const upgrade = takeUpgrade(req);
    if (!upgrade) {
      throw new SwitchboardError('invalid_request', {
        message: 'This endpoint is a WebSocket (Chrome DevTools Protocol); connect with an upgrade request.',
      });
    }
    const socket = new RelayedWebSocket(upgrade.socket);
    targets.set(req, {
      origin: `http://${devtoolsAddress}`,
      path: `/devtools/${id}`,
      keyId: ctx.key?.id ?? '',
      requestId: ctx.requestId,
      socket,
    });
    // Revoked key, stale key store, address no longer allowed: the client gets a close frame
    // naming the code a new request would get (or, before the upgrade completed, a cut).
    live.track(res, ctx.recheckAccess, (reason) => socket.close(closeCodeFor(reason), reason.code));
    proxy.upgrade(req, upgrade.socket as never, upgrade.head);
  });
  return router;
}
