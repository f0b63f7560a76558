import type { IncomingMessage } from 'node:http';
import { Agent as TlsAgent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { CLUSTER_SECRET_KEY, parseTarget, watchTlsFiles } from '@switchboard/grpc';
import type { PendingUpgrade } from './upgrades.js';
import type { RelayedWebSocket } from './websocket-ending.js';
import { perApp, type RouteDeps } from './route.js';

/** Where an accepted upgrade goes on the owning browser worker's relay port. */
export interface RelayTarget {
  /** The owning worker's relay, host:port. */
  origin: string;
  path: string;
  /** The key the worker checks the session against (its owner's), as in gRPC metadata. */
  keyId: string;
  requestId: string;
  socket: RelayedWebSocket;
  /** What else the worker must know from the gateway rather than from the client. */
  headers?: Readonly<Record<string, string>>;
}

const targets = new WeakMap<IncomingMessage, RelayTarget>();

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
        // The client's credentials stay here: the worker learns only what the gateway tells it.
        proxyReq.removeHeader('authorization');
        proxyReq.removeHeader('cookie');
        proxyReq.setHeader('x-switchboard-key-id', target.keyId);
        proxyReq.setHeader('x-request-id', target.requestId);
        for (const [name, value] of Object.entries(target.headers ?? {})) proxyReq.setHeader(name, value);
        // The relay refuses upgrades without it, so only a gateway can claim a key id there.
        proxyReq.setHeader(CLUSTER_SECRET_KEY, clusterSecret);
        // Runs before http-proxy's own listener: closing later must stop the upstream side too.
        proxyReq.once('upgrade', (_res: IncomingMessage, upstream: Duplex) =>
          target.socket.attachUpstream(upstream),
        );
      },
      error: (error, _req, socket) => {
        logger.warn({ err: error }, 'worker relay proxy failed');
        if ('destroy' in socket) socket.destroy();
      },
    },
    logger: {
      info: () => undefined,
      warn: (m: unknown) => logger.warn({ detail: m }, 'worker relay proxy'),
      error: (m: unknown) => logger.warn({ detail: m }, 'worker relay proxy'),
    },
  });
});

/** Relays an accepted WebSocket upgrade (DevTools, a live viewer) to the session's worker. */
export function relayUpgrade(
  deps: RouteDeps,
  req: IncomingMessage,
  upgrade: PendingUpgrade,
  target: RelayTarget,
): void {
  targets.set(req, target);
  proxyOf(deps).upgrade(req, upgrade.socket as never, upgrade.head);
}
