import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '@switchboard/telemetry';
import {
  type AllowedHosts,
  type HostResolver,
  parseAuthority,
  resolveAllowed,
  type ResolvedAddress,
  UrlNotAllowedError,
} from '@switchboard/address-guard';
import {
  endToEndHeaders,
  refusals,
  refuseResponse,
  refuseSocket,
  upgradeRequestHead,
  type Refusal,
} from './proxy-wire.js';

export interface BlockedInfo {
  host: string;
  port: number;
  reason: string;
}

export interface ForwardProxyOptions {
  allowed: AllowedHosts;
  resolver: HostResolver;
  logger: Logger;
  connectTimeoutMs?: number;
  /** A request or tunnel refused by the guard; the proxy serves one browser, so this names the session. */
  onBlocked?: (info: BlockedInfo) => void;
  /** Every request and tunnel: browser traffic counts as session activity. */
  onActivity?: () => void;
}

export interface ForwardProxy {
  port: number;
  /** Stops listening and ends every connection, open tunnels included. */
  close(): Promise<void>;
}

// Browsers send large cookie headers; Node's 16 KiB default would turn those pages into errors.
const maxHeaderSize = 64 * 1024;

type Decision = { ok: true; target: ResolvedAddress } | { ok: false; refusal: Refusal };

/**
 * The address guard's enforcement point: a forward HTTP proxy on 127.0.0.1 for one Chromium. It
 * resolves each target itself, refuses blocked addresses, and connects to exactly the address it
 * checked — for plain requests, CONNECT tunnels (HTTPS, WebSockets) and plain Upgrade requests —
 * so neither sub-resources, redirects, WebSockets nor DNS rebinding get around it.
 */
export async function startForwardProxy(options: ForwardProxyOptions): Promise<ForwardProxy> {
  const { allowed, resolver, logger, onBlocked, onActivity, connectTimeoutMs = 10_000 } = options;
  const sockets = new Set<Duplex>();
  // Keep-alive upstream is safe: the pool is keyed by the checked address, never by a name.
  const agent = new Agent({ keepAlive: true });
  let closing: Promise<void> | undefined;

  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const decide = async (host: string, port: number): Promise<Decision> => {
    try {
      return { ok: true, target: await resolveAllowed(host, port, { allowed, resolver }) };
    } catch (error) {
      if (error instanceof UrlNotAllowedError) return block(host, port, error.reason);
      logger.debug({ host, port }, 'guard proxy: name does not resolve');
      return { ok: false, refusal: refusals.dnsFailed };
    }
  };

  const block = (host: string, port: number, reason: string): Decision => {
    logger.debug({ host, port, reason }, 'guard proxy: blocked');
    onBlocked?.({ host, port, reason });
    return { ok: false, refusal: reason === 'port' ? refusals.portBlocked : refusals.blocked };
  };

  /** A TCP connection to the checked address, or the reason there is none. */
  const dial = (target: ResolvedAddress, port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: target.address, port, family: target.family });
      track(socket);
      const timer = setTimeout(() => socket.destroy(new Error('connect timeout')), connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', reject);
        resolve(socket);
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });

  const forwardRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    onActivity?.();
    const url = absoluteTarget(req.url);
    if (url === null) return refuseResponse(res, refusals.notProxyRequest);
    const port = portOf(url);
    const decision =
      url.protocol === 'http:' ? await decide(url.hostname, port) : block(url.hostname, port, 'scheme');
    if (!decision.ok) return refuseResponse(res, decision.refusal);
    if (closing !== undefined || req.socket.destroyed) return;
    logger.debug({ method: req.method, host: url.hostname, port }, 'guard proxy: request');

    const headers = endToEndHeaders(req.headers);
    headers.host = url.host;
    // The body arrives decoded; without a length it must be re-framed, whatever the method.
    if (req.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = 'chunked';
    const upstream = httpRequest({
      host: decision.target.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent,
      setHost: false,
      maxHeaderSize,
    });
    upstream.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('response', (incoming) => {
      try {
        res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEndHeaders(incoming.headers));
      } catch (error) {
        // The far end is any server on the internet: a status like 099 must not crash the worker.
        upstream.destroy(error as Error);
        return;
      }
      incoming.pipe(res);
      // A response cut short upstream must not look complete downstream.
      incoming.once('close', () => {
        if (!incoming.complete) res.destroy();
      });
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      logger.debug({ host: url.hostname, port, code: error.code }, 'guard proxy: upstream failed');
      if (res.headersSent || res.destroyed) res.destroy();
      else refuseResponse(res, refusals.connectFailed);
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  };

  const openTunnel = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on('error', () => socket.destroy());
    onActivity?.();
    const authority = parseAuthority(req.url ?? '');
    if (authority?.port === undefined) return refuseSocket(socket, refusals.notProxyRequest);
    const { host, port } = authority;
    const decision = await decide(host, port);
    if (!decision.ok) return refuseSocket(socket, decision.refusal);
    logger.debug({ host, port }, 'guard proxy: tunnel');
    await splice(socket, decision.target, host, port, 'HTTP/1.1 200 Connection Established\r\n\r\n', head);
  };

  const forwardUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on('error', () => socket.destroy());
    onActivity?.();
    const url = absoluteTarget(req.url);
    if (url === null) return refuseSocket(socket, refusals.notProxyRequest);
    const port = portOf(url);
    const decision =
      url.protocol === 'http:' || url.protocol === 'ws:'
        ? await decide(url.hostname, port)
        : block(url.hostname, port, 'scheme');
    if (!decision.ok) return refuseSocket(socket, decision.refusal);
    logger.debug({ host: url.hostname, port }, 'guard proxy: upgrade');
    const requestHead = upgradeRequestHead(
      req.method ?? 'GET',
      `${url.pathname}${url.search}`,
      url.host,
      req.rawHeaders,
    );
    // The server's own answer (101 or otherwise) travels back through the tunnel untouched.
    await splice(
      socket,
      decision.target,
      url.hostname,
      port,
      null,
      Buffer.concat([Buffer.from(requestHead), head]),
    );
  };

  /** Connects to the checked address and pipes both ways; `greeting` goes to the client first. */
  const splice = async (
    client: Duplex,
    target: ResolvedAddress,
    host: string,
    port: number,
    greeting: string | null,
    firstBytes: Buffer,
  ): Promise<void> => {
    let upstream: Socket;
    try {
      upstream = await dial(target, port);
    } catch (error) {
      logger.debug(
        { host, port, code: (error as NodeJS.ErrnoException).code },
        'guard proxy: connect failed',
      );
      return refuseSocket(client, refusals.connectFailed);
    }
    if (closing !== undefined || client.destroyed) {
      upstream.destroy();
      return;
    }
    const abort = (): void => {
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', abort);
    client.on('error', abort);
    // When one side closes, the other still gets what is buffered for it (end, not destroy).
    upstream.once('close', () => release(client));
    client.once('close', () => release(upstream));
    if (greeting !== null) client.write(greeting);
    if (firstBytes.length > 0) upstream.write(firstBytes);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = createServer({ maxHeaderSize });
  server.on('connection', track);
  // A handler that throws must cost one connection, never the worker.
  const contain = (socket: Duplex, work: Promise<void>): void => {
    work.catch((error: unknown) => {
      logger.debug({ err: error }, 'guard proxy: handler failed');
      socket.destroy();
    });
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    contain(req.socket, forwardRequest(req, res)),
  );
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    contain(socket, openTunnel(req, socket, head)),
  );
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    contain(socket, forwardUpgrade(req, socket, head)),
  );

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the guard proxy has no TCP address');

  return {
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        agent.destroy();
      });
      return closing;
    },
  };
}

/** The URL of an absolute-form request target (`GET http://host/path`); null for origin-form. */
function absoluteTarget(raw: string | undefined): URL | null {
  if (raw === undefined || !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return null;
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

function portOf(url: URL): number {
  return url.port === '' ? 80 : Number(url.port);
}

/** Ends a socket once what is queued for it has been written, then frees it. */
function release(socket: Duplex): void {
  if (!socket.destroyed) socket.end(() => socket.destroy());
}
