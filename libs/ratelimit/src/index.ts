export { createRedisClient, rateLimitRedisOptions } from './client.js';
export {
  createRateLimiter,
  WINDOW_SECONDS,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitResult,
} from './limiter.js';
