import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { type TierName, tierNames } from '../config.js';

export function tierRank(tier: TierName): number {
  return tierNames.indexOf(tier);
}

/** Path prefixes that need more than the basic tier; checked before the rate limit spends. */
const minimumTiers: { prefix: string; tier: TierName }[] = [{ prefix: '/animate', tier: 'professional' }];

export function tierGate(): RequestHandler {
  return (req, res, next) => {
    const key = res.locals.ctx.key;
    const rule = minimumTiers.find(({ prefix }) => req.path === prefix || req.path.startsWith(`${prefix}/`));
    if (key && rule && tierRank(key.tier) < tierRank(rule.tier)) {
      next(
        new SwitchboardError('tier_required', {
          message: `This endpoint needs the ${rule.tier} tier or higher.`,
        }),
      );
      return;
    }
    next();
  };
}
