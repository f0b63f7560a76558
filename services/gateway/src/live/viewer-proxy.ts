import type { IncomingMessage } from 'node:http';
import { Agent as TlsAgent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { CLUSTER_SECRET_KEY, parseTarget, watchTlsFiles } from '@switchboard/grpc';
import type { RelayedWebSocket } from '../http/websocket-ending.js';
import { perApp, type RouteDeps } from '../http/route.js';
import type { LiveMode } from './link-store.js';

/** Where an accepted viewer's upgrade goes (set by the route, read by the proxy). */
export interface ViewerTarget {
  /** The owning worker's relay port, host:port. */
  origin: string;
  sessionId: string;
  ownerKeyId: string;
  mode: LiveMode;
  requestId: string;
  socket: RelayedWebSocket;
}

export const viewerTargets = new WeakMap<IncomingMessage, ViewerTarget>();

/** As for DevTools: with gRPC TLS on, the worker's relay port speaks TLS with the same files. */
function relayAgent(config: RouteDeps['config']): TlsAgent | undefined {
  const tls = config.workerTls;
  if (tls === undefined) return undefined;
  const service = parseTarget(config.workers.browser.address).host;
  const servername = tls.serverName ?? (isIP(service) === 0 ? service : undefined);
  const files = watchTlsFiles(tls);
  const agent = new TlsAgent({ ...files.current(), ...(servername === undefined ? {} : { servername }) });
  files.onChange((pems) => Object.assign(agent.options, pems));
  return agent;
}

/**
 * Relays a viewer's WebSocket to the worker that owns the session, on the DevTools relay's port.
 * The worker learns the session's owner and the link's mode from the gateway (with the cluster
 * secret), never from the viewer; the viewer's cookies and headers do not go along.
 */
export const viewerProxyOf = perApp(({ logger, config }) => {
  const clusterSecret = config.clusterSecret;
  const agent = relayAgent(config);
  const scheme = agent === undefined ? 'http' : 'https';
  return createProxyMiddleware<IncomingMessage>({
    ws: true,
    changeOrigin: true,
    ...(agent === undefined ? {} : { agent }),
    router: (req) => `${scheme}://${viewerTargets.get(req)!.origin}`,
    pathRewrite: (_path, req) => `/live/${viewerTargets.get(req)!.sessionId}`,
    on: {
      proxyReqWs: (proxyReq, req) => {
        const target = viewerTargets.get(req)!;
        proxyReq.removeHeader('authorization');
        proxyReq.removeHeader('cookie');
        proxyReq.setHeader('x-switchboard-key-id', target.ownerKeyId);
        proxyReq.setHeader('x-switchboard-live-mode', target.mode);
        proxyReq.setHeader('x-request-id', target.requestId);
        proxyReq.setHeader(CLUSTER_SECRET_KEY, clusterSecret);
        proxyReq.once('upgrade', (_res: IncomingMessage, upstream: Duplex) =>
          target.socket.attachUpstream(upstream),
        );
      },
      error: (error, _req, socket) => {
        logger.warn({ err: error }, 'live view proxy failed');
        if ('destroy' in socket) socket.destroy();
      },
    },
    logger: {
      info: () => undefined,
      warn: (m: unknown) => logger.warn({ detail: m }, 'live view proxy'),
      error: (m: unknown) => logger.warn({ detail: m }, 'live view proxy'),
    },
  });
});
