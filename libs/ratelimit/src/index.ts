export { createRedisClient, rateLimitRedisOptions } from './client.js';
export {
  createRateLimiter,
  WINDOW_SECONDS,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitResult,
} from './limiter.js';
export {
  createConcurrencyLimiter,
  DEFAULT_LEASE_MS,
  type CallSlot,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
} from './concurrency.js';
