import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';
import { hasBody } from './json-body.js';
import type { BodyRateLimits } from './slow-bodies.js';

export interface LingerLimits {
  /** The longest the rest of a body is read and dropped after an early answer. */
  maxMs: number;
  /** The most body bytes read and dropped after an early answer. */
  maxBytes: number;
  /** The same minimum rate as while a body is read (slow-bodies.ts). */
  bodyRate: BodyRateLimits;
}

/**
 * A lingering close for answers sent before the request body was read (401, 413, …; they go out
 * with `Connection: close`, http/errors.ts). Closing at once would leave the client's unsent body
 * in flight: the kernel answers it with a reset, and most clients (Node's fetch, curl) then
 * report a broken pipe instead of the answer. So, like nginx, the answer is flushed and the
 * sending side shut, the rest of the body is read and dropped, and the socket is closed once the
 * body has ended. Never unbounded: past `maxMs`, past `maxBytes`, or below the minimum body rate
 * in any window, the connection is cut as a slow body would be.
 */
export function lingerAfterEarlyAnswers(limits: LingerLimits): RequestHandler {
  return (req, res, next) => {
    if (!req.complete && hasBody(req.headers)) {
      // 'prefinish' comes before Node's own 'finish' handler, which is what closes the socket.
      res.once('prefinish', () => {
        const socket = res.socket;
        if (req.complete || !socket || socket.destroyed) return;
        if (!/\bclose\b/i.test(String(res.getHeader('connection') ?? ''))) return;
        // Node ends an answer marked `Connection: close` with socket.destroySoon(), which would
        // destroy the socket once the answer is out. Only the answer and the FIN go out instead:
        // the client sees the whole answer while it still sends.
        socket.destroySoon = () => socket.end();
        // Reading from here on also keeps Node from dumping the body, which would drop it
        // unread and unseen, so neither its end nor its bytes could be counted.
        lingerThenClose(req, socket, limits);
      });
    }
    next();
  };
}

function lingerThenClose(req: IncomingMessage, socket: Socket, limits: LingerLimits): void {
  const minBytesPerWindow = (limits.bodyRate.minBytesPerSecond * limits.bodyRate.windowMs) / 1000;
  let total = 0;
  let inWindow = 0;
  const cut = () => {
    stop();
    socket.destroy();
  };
  const drop = (chunk: Buffer) => {
    total += chunk.length;
    inWindow += chunk.length;
    if (total > limits.maxBytes) cut();
  };
  const ended = () => {
    stop();
    // All of the body is in; close as soon as the answer and the FIN have left (socket.end()).
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const deadline = setTimeout(cut, limits.maxMs);
  const rate = setInterval(() => {
    if (inWindow < minBytesPerWindow) cut();
    inWindow = 0;
  }, limits.bodyRate.windowMs);
  deadline.unref();
  rate.unref();
  function stop() {
    clearTimeout(deadline);
    clearInterval(rate);
    req.off('data', drop);
    req.off('end', ended);
    socket.off('close', stop);
  }
  socket.once('close', stop);
  if (req.complete) {
    ended();
    return;
  }
  // Whatever a parser left piped or paused (a body limit stops reading), the rest is dropped here.
  req.unpipe();
  req.on('data', drop);
  req.once('end', ended);
  req.resume();
}
