import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { RateLimiter } from '@switchboard/ratelimit';
import type { TierPolicies } from '@switchboard/keys';
import type { GatewayMetrics } from '../ops/metrics.js';

/**
 * Per-key limit shared by every replica through Redis. Headers follow the IETF httpapi
 * ratelimit-headers draft and are set on every authenticated response, 429s included.
 */
export function rateLimit(
  limiter: RateLimiter,
  tiers: TierPolicies,
  metrics: GatewayMetrics,
): RequestHandler {
  return async (_req, res, next) => {
    const { key } = res.locals.ctx;
    if (!key) throw new SwitchboardError('unauthorized');
    const limit = key.rate_limit_per_minute ?? tiers[key.tier].requests_per_minute;
    const state = await limiter.consume(`key:${key.id}`, limit);
    res.setHeader('RateLimit-Policy', `"default";q=${state.limit};w=60`);
    res.setHeader('RateLimit', `"default";r=${state.remaining};t=${state.resetSeconds}`);
    if (!state.allowed) {
      metrics.rateLimitRejections.inc({ reason: 'key' });
      throw new SwitchboardError('rate_limited', { retryAfterSeconds: state.resetSeconds });
    }
    next();
  };
}
