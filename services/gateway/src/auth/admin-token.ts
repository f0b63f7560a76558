import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { bearerToken, type AuthFailureGuard } from './authenticate.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Guards /admin/api: the admin token, compared in constant time over fixed-length digests. Wrong
 * tokens spend the admin guard's own (stricter) budget, never the API keys' one.
 */
export function requireAdminToken(adminToken: string, guard: AuthFailureGuard): RequestHandler {
  const expected = digest(adminToken);
  return async (req, res, next) => {
    const token = bearerToken(req.get('authorization'));
    if (!token || !timingSafeEqual(digest(token), expected)) {
      throw await guard.fail(
        res.locals.ctx.clientIp,
        new SwitchboardError('unauthorized', { message: 'A valid admin token is required.' }),
      );
    }
    next();
  };
}
