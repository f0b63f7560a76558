import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { TierPolicies } from '@switchboard/keys';
import type { ConcurrencyLimiter } from '@switchboard/ratelimit';
import type { GatewayMetrics } from '../ops/metrics.js';

/**
 * A place is usually free again within a couple of seconds of a refusal (a short call ends, or a
 * stream the client no longer reads is cut); asking sooner would mostly spend the rate limit.
 */
const RETRY_AFTER_SECONDS = 2;

/**
 * The tier's "model calls at once": a request to a route that calls a model (declared with
 * `modelCalls`) holds one of its key's places for that capability from before its body is read
 * until its response ends — an upload, a queued call and a stream all count — and a request past
 * the limit is refused before it costs anything. Places are shared by every gateway replica
 * (libs/ratelimit concurrency.ts), so the limit holds across the cluster.
 */
export function holdModelCalls(
  limiter: ConcurrencyLimiter,
  tiers: TierPolicies,
  metrics: GatewayMetrics,
): RequestHandler {
  return async (_req, res, next) => {
    const capability = res.locals.route?.modelCalls;
    const { key } = res.locals.ctx;
    if (capability === undefined || !key) {
      next();
      return;
    }
    const limit = tiers[key.tier].model_calls;
    const slot = await limiter.acquire(`${key.id}:${capability}`, limit);
    if (!slot) {
      metrics.rateLimitRejections.inc({ reason: 'concurrency' });
      throw new SwitchboardError('concurrency_limit', {
        message: `This key already has ${limit} ${capability} calls running or waiting, the most its tier allows; retry when one ends.`,
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
    // 'close' follows the end of every response, finished or cut, so the place is always given back.
    res.once('close', () => slot.release());
    next();
  };
}
