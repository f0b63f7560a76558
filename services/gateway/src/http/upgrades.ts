import { type IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express, Request } from 'express';

export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, PendingUpgrade>();

/**
 * Sends WebSocket upgrade requests through the Express app like any other request, so they meet
 * the same request id, IP allowlists, key authentication, tier gate and rate limit, and an
 * error is the same JSON body, written onto the socket. A route that accepts the upgrade takes
 * the socket with takeUpgrade(); no route writing a response means it was refused.
 */
export function routeUpgrades(server: Server, app: Express): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrades.set(req, { socket, head });
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    // After an error answer there is nothing more to say on this socket.
    res.once('finish', () => socket.end());
    socket.on('error', () => socket.destroy());
    app(req, res);
  });
}

/** The socket of an upgrade request (once), or undefined for a plain HTTP request. */
export function takeUpgrade(req: Request): PendingUpgrade | undefined {
  const pending = upgrades.get(req);
  upgrades.delete(req);
  return pending;
}
