import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '@switchboard/telemetry';
import { RequestContext } from './context.js';

// Echo a caller's id only when it is safe to put in logs and headers as it is.
const wellFormed = /^[A-Za-z0-9._:-]{8,128}$/;

/** Gives every request an id (echoed or new), a child logger carrying it, and the header. */
export function requestId(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    const id = incoming && wellFormed.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    res.locals.ctx = new RequestContext(id, logger);
    next();
  };
}
