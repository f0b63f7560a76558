import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { httpStatusOf, SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import type { BrowserSession } from '../sessions/session.js';

/** Headers the gateway sets after it has authenticated the caller (like gRPC call metadata). */
export const KEY_ID_HEADER = 'x-switchboard-key-id';
const REQUEST_ID_HEADER = 'x-request-id';
const PATH = /^\/devtools\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;
/** CDP messages carry whole screenshots and DOM snapshots. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export interface DevtoolsTargets {
  devtoolsTarget(sessionId: string, keyId: string): { session: BrowserSession; cdpUrl: string };
}

export interface DevtoolsRelay {
  port: number;
  close(): Promise<void>;
}

/**
 * The worker's end of `GET /api/browser/session/{id}/devtools`: a WebSocket server that the
 * gateway proxies to, relaying each client to its session browser's own CDP endpoint. Only
 * gateways may reach this port (the chart's NetworkPolicy); they pass the caller's key id.
 */
export async function startDevtoolsRelay(options: {
  port: number;
  host: string;
  targets: DevtoolsTargets;
  logger: Logger;
}): Promise<DevtoolsRelay> {
  const { targets, logger } = options;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
  });
  const server: Server = createServer((_req, res) => {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'invalid_request', message: 'WebSocket upgrade required.' } }));
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const log = logger.child({ request_id: req.headers[REQUEST_ID_HEADER] });
    const sessionId = PATH.exec(req.url ?? '')?.[1];
    const keyId = req.headers[KEY_ID_HEADER];
    let target: { session: BrowserSession; cdpUrl: string };
    try {
      if (!sessionId || typeof keyId !== 'string') throw new SwitchboardError('session_not_found');
      target = targets.devtoolsTarget(sessionId, keyId);
    } catch (error) {
      refuse(socket, error);
      return;
    }
    const upstream = new WebSocket(target.cdpUrl, {
      perMessageDeflate: false,
      maxPayload: MAX_MESSAGE_BYTES,
    });
    upstream.once('error', (error) => {
      log.warn({ err: error, session_id: sessionId }, 'browser devtools endpoint unreachable');
      refuse(socket, new SwitchboardError('session_closed'));
    });
    upstream.once('open', () => {
      upstream.removeAllListeners('error');
      wss.handleUpgrade(req, socket, head, (client) => bridge(client, upstream, target.session));
      log.debug({ session_id: sessionId }, 'devtools client connected');
    });
  });

  server.listen(options.port, options.host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Client → browser messages are the session's activity; either side closing closes both. */
function bridge(client: WebSocket, upstream: WebSocket, session: BrowserSession): void {
  client.on('message', (data: RawData, isBinary: boolean) => {
    session.touch();
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
  });
  upstream.on('message', (data: RawData, isBinary: boolean) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  const closeBoth = () => {
    client.terminate();
    upstream.terminate();
  };
  client.once('close', closeBoth);
  upstream.once('close', closeBoth);
  client.on('error', closeBoth);
  upstream.on('error', closeBoth);
}

function refuse(socket: Duplex, error: unknown): void {
  const known = error instanceof SwitchboardError ? error : new SwitchboardError('internal');
  const body = JSON.stringify({ error: { code: known.code, message: known.message } });
  socket.end(
    `HTTP/1.1 ${httpStatusOf(known.code)} ${known.code}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
