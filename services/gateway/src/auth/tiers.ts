import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { type Tier, tierRank } from '@switchboard/keys';

/** Path prefixes that need more than the basic tier; checked before the rate limit spends. */
const minimumTiers: { prefix: string; tier: Tier }[] = [
  { prefix: '/animate', tier: 'professional' },
  { prefix: '/v1/videos', tier: 'professional' },
];

/**
 * The path as a policy must read it: percent-decoded, lower-cased, with repeated and trailing
 * slashes folded, so `/ANIMATE/`, `//animate` and `/%61nimate` all read `/animate`. Routing is
 * exact (http/router.ts), so such spellings reach no handler anyway; reading them generously here
 * as well means a future router option cannot quietly open a way around the gate.
 */
export function policyPath(path: string): string {
  // Nearly every path is already canonical: skip the work on the hot path.
  if (!/[%A-Z]|\/\/|.\/$/.test(path)) return path;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape cannot match a route; keep the raw form.
  }
  const folded = decoded.toLowerCase().replace(/\/{2,}/g, '/');
  return folded.length > 1 ? folded.replace(/\/+$/, '') : folded;
}

export function tierGate(): RequestHandler {
  return (req, res, next) => {
    const key = res.locals.ctx.key;
    const path = policyPath(req.path);
    const rule = minimumTiers.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
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
