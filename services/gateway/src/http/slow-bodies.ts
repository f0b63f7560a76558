import type { RequestHandler } from 'express';
import { hasBody } from './json-body.js';

export interface BodyRateLimits {
  /** Below this many bytes per second, measured over each window, the client is cut off. */
  minBytesPerSecond: number;
  /** Length of each measuring window; the first one is the grace a body gets to start. */
  windowMs: number;
}

/**
 * Cuts clients that send a request body too slowly (slowloris), while the body is being read.
 * Every window the bytes read from the socket are compared with the minimum rate; a window that
 * ends with the request's buffer full (the gateway stopped reading because a worker pushes back)
 * does not count against the client. Headers have their own timeout on the server
 * (main.ts), and once the body is complete nothing here runs, so long SSE streams are untouched.
 */
export function cutSlowBodies(limits: BodyRateLimits): RequestHandler {
  const minBytesPerWindow = (limits.minBytesPerSecond * limits.windowMs) / 1000;
  return (req, _res, next) => {
    const socket = req.socket;
    if (req.complete || !hasBody(req.headers)) {
      next();
      return;
    }
    let readBefore = socket.bytesRead;
    const timer = setInterval(() => {
      if (req.complete || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      const read = socket.bytesRead - readBefore;
      readBefore = socket.bytesRead;
      // A full buffer means the gateway stopped reading (a worker is pushing back): not the client's fault.
      const backedUp = req.readableLength >= req.readableHighWaterMark;
      if (read < minBytesPerWindow && !backedUp) {
        clearInterval(timer);
        socket.destroy();
      }
    }, limits.windowMs);
    timer.unref();
    const stop = () => clearInterval(timer);
    req.once('end', stop);
    req.once('close', stop);
    next();
  };
}
