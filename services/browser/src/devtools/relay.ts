import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import {
  createServer as createTlsServer,
  type Server as TlsServer,
  type ServerOptions as TlsServerOptions,
} from 'node:https';
import type { Duplex } from 'node:stream';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { SwitchboardError } from '@switchboard/errors';
import {
  CLUSTER_SECRET_KEY,
  clusterSecretMatches,
  type ServerTls,
  type TlsPems,
  watchTlsFiles,
} from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { AllowedHosts } from '@switchboard/address-guard';
import type { DevtoolsTarget } from '../sessions/session-service.js';
import type { LiveUpgradeHandler } from '../live/live-upgrades.js';
import { bridge, MAX_BROWSER_MESSAGE_BYTES, MAX_CLIENT_MESSAGE_BYTES } from './cdp-bridge.js';
import { refuseUpgrade } from './refuse-upgrade.js';

/** Headers the gateway sets after it has authenticated the caller (like gRPC call metadata). */
export const KEY_ID_HEADER = 'x-switchboard-key-id';
const REQUEST_ID_HEADER = 'x-request-id';
const PATH = /^\/devtools\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;
/** An upgrade request must be complete within this long; a half-sent one is dropped. */
const HEADERS_TIMEOUT_MS = 10_000;

export interface DevtoolsTargets {
  /** Takes one of the session's DevTools connections; `429 rate_limited` when none is left. */
  devtoolsTarget(sessionId: string, keyId: string): DevtoolsTarget;
}

export interface DevtoolsRelay {
  port: number;
  /**
   * Relays to `targets` from now on. The relay listens first because the worker's registry entry
   * names its port, and the sessions behind `targets` write that entry; upgrades that come earlier
   * are refused `unavailable`.
   */
  serve(targets: DevtoolsTargets): void;
  /** Live-view viewers (`/live/{id}`) come through this port too, behind the same cluster secret. */
  serveLive(handler: LiveUpgradeHandler): void;
  close(): Promise<void>;
}

/**
 * The worker's end of `GET /api/browser/session/{id}/devtools`: a WebSocket server that the
 * gateway proxies to, relaying each client to its session browser's own CDP endpoint through the
 * DevTools policy (cdp-policy.ts). Only gateways may reach this port (the chart's NetworkPolicy)
 * and only they know the cluster secret; they pass the caller's key id.
 */
export async function startDevtoolsRelay(options: {
  port: number;
  host: string;
  logger: Logger;
  /** Only a gateway knows it: an upgrade without it never learns whether a session exists. */
  clusterSecret: string;
  /** The operator's exemptions from the address guard, for URLs clients navigate to. */
  allowed: AllowedHosts;
  /** Ping interval that finds half-open client connections (default 30 s). */
  heartbeatMs?: number;
  /** The gRPC port's TLS files: gateways reach this port as they reach that one. Unset = plaintext. */
  tls?: ServerTls | undefined;
  tlsRefreshIntervalMs?: number;
}): Promise<DevtoolsRelay> {
  const { logger } = options;
  let targets: DevtoolsTargets | undefined;
  let liveUpgrade: LiveUpgradeHandler | undefined;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_CLIENT_MESSAGE_BYTES,
  });
  const plainRequest: RequestListener = (_req, res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'invalid_request', message: 'WebSocket upgrade required.' } }));
  };
  const tlsFiles = options.tls && watchTlsFiles(options.tls, options.tlsRefreshIntervalMs);
  const server: Server = tlsFiles
    ? createTlsServer(tlsOptions(tlsFiles.current()), plainRequest)
    : createServer(plainRequest);
  // Renewed files reach the connections made from now on, as on the gRPC port.
  tlsFiles?.onChange((pems) => (server as TlsServer).setSecureContext(pems));

  server.headersTimeout = HEADERS_TIMEOUT_MS;

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node leaves an upgraded socket without an error listener: a client's TCP reset while the
    // upstream connects would otherwise be an uncaught exception that takes the worker down.
    socket.on('error', () => socket.destroy());
    if (liveUpgrade?.(req, socket, head)) return;
    const requestId = req.headers[REQUEST_ID_HEADER];
    const log = logger.child({ request_id: requestId });
    const sessionId = PATH.exec(req.url ?? '')?.[1];
    const keyId = req.headers[KEY_ID_HEADER];
    let target: DevtoolsTarget;
    try {
      if (!clusterSecretMatches(req.headers[CLUSTER_SECRET_KEY], options.clusterSecret))
        throw new SwitchboardError('unauthorized');
      if (!sessionId || typeof keyId !== 'string') throw new SwitchboardError('session_not_found');
      if (!targets) throw new SwitchboardError('unavailable');
      target = targets.devtoolsTarget(sessionId, keyId);
    } catch (error) {
      if (error instanceof SwitchboardError && error.code === 'rate_limited') {
        log.info({ session_id: sessionId }, 'devtools connection refused: the session has all it may have');
      }
      refuseUpgrade(socket, error, requestId);
      return;
    }
    // The connection's place is held until its socket closes, however it ends.
    socket.once('close', target.release);
    const upstream = new WebSocket(target.cdpUrl, {
      perMessageDeflate: false,
      maxPayload: MAX_BROWSER_MESSAGE_BYTES,
    });
    // The client may leave before (or while) the upgrade completes: its upstream goes with it.
    socket.once('close', () => upstream.terminate());
    upstream.once('error', (error) => {
      if (socket.destroyed) return;
      log.warn({ err: error, session_id: sessionId }, 'browser devtools endpoint unreachable');
      refuseUpgrade(socket, new SwitchboardError('session_closed'), requestId);
    });
    upstream.once('open', () => {
      upstream.removeAllListeners('error');
      upstream.on('error', () => upstream.terminate());
      if (socket.destroyed) {
        upstream.terminate();
        return;
      }
      wss.handleUpgrade(req, socket, head, (client) =>
        bridge(client, upstream, {
          allowed: options.allowed,
          tabs: target.tabs,
          onActivity: () => target.session.touch(),
          log: log.child({ session_id: sessionId }),
          heartbeatMs: options.heartbeatMs,
        }),
      );
      log.debug({ session_id: sessionId }, 'devtools client connected');
    });
  });

  server.listen(options.port, options.host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    serve(served) {
      targets = served;
    },
    serveLive(handler) {
      liveUpgrade = handler;
    },
    async close() {
      tlsFiles?.close();
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** With a CA, mutual TLS as on the gRPC port: a client without a certificate from it is cut. */
function tlsOptions(pems: TlsPems): TlsServerOptions {
  return { ...pems, requestCert: pems.ca !== undefined, rejectUnauthorized: pems.ca !== undefined };
}
