import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { tierRank } from '@switchboard/keys';

/**
 * The tier the matched route declares (http/route.ts), checked before the rate limit spends.
 * Routing is exact (http/router.ts), so a spelling such as `/ANIMATE/` or `/%61nimate` matches no
 * declaration and reaches no handler either: a plain 404.
 */
export function tierGate(): RequestHandler {
  return (_req, res, next) => {
    const { key } = res.locals.ctx;
    const tier = res.locals.route?.tier;
    if (key && tier && tierRank(key.tier) < tierRank(tier)) {
      next(
        new SwitchboardError('tier_required', { message: `This endpoint needs the ${tier} tier or higher.` }),
      );
      return;
    }
    next();
  };
}
