import type { IncomingHttpHeaders } from 'node:http';
import express, { type RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';

/** Whether a request announces a body (a length above zero, or chunked). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * JSON bodies for a route: another content type is 415, a body over `limitBytes` is 413 (before
 * it is read in full), and a request with no body at all counts as `{}` so calls documented as
 * "no body" work with or without a Content-Type.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  return (req, res, next) => {
    if (!hasBody(req.headers)) {
      req.body = {};
      next();
      return;
    }
    if (!req.is('application/json') && !req.is('application/*+json')) {
      next(new SwitchboardError('unsupported_media_type', { message: 'Send the body as application/json.' }));
      return;
    }
    parse(req, res, next);
  };
}
