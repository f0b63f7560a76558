import type { Redis } from 'ioredis';
import type { Logger } from '@switchboard/telemetry';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Fixed windows of one minute: limits are stated "per minute" (`RateLimit-Policy: …;w=60`). */
export const WINDOW_SECONDS = 60;
/** While degraded, one call per this interval tries Redis again; the rest go straight to memory. */
const STORE_RETRY_MS = 1000;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets; ≥ 1, usable as Retry-After. */
  resetSeconds: number;
}

export interface RateLimiterOptions {
  /** An ioredis client, best made by createRedisClient() so calls fail fast. Not closed by us. */
  redis: Redis;
  /** Namespace of the counters in Redis, e.g. `rl:key` or `rl:auth-ip`. */
  keyPrefix: string;
  logger?: Logger;
}

export interface RateLimiter {
  /** Counts one request for `subject` against `limitPerMinute` and says whether it may go on. */
  consume(subject: string, limitPerMinute: number): Promise<RateLimitResult>;
  /** True while answers come from the per-process fallback instead of Redis. */
  readonly degraded: boolean;
  storeHealthy(): boolean;
  /** Detaches from the Redis client's events (the client itself belongs to the caller). */
  close(): void;
}

interface LimiterPair {
  store: RateLimiterRedis;
  memory: RateLimiterMemory;
}

function toResult(res: RateLimiterRes | null, limit: number, allowed: boolean): RateLimitResult {
  const consumed = res?.consumedPoints ?? 0;
  const resetSeconds =
    res === null || res.msBeforeNext < 0 ? WINDOW_SECONDS : Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return { allowed, limit, remaining: Math.max(limit - consumed, 0), resetSeconds };
}

/**
 * A limiter shared by all gateway replicas through Redis. When Redis fails or is not connected,
 * answers come from an in-process RateLimiterMemory with the same limit: each replica then
 * enforces the limit on its own (so the cluster admits up to limit × replicas) — degraded but
 * never failing open entirely and never making requests wait. We run the fallback ourselves
 * rather than through rate-limiter-flexible's `insuranceLimiter` because we need to know which
 * one answered, to report `degraded` (readiness, metrics) and to log the transitions.
 */
class SharedRateLimiter implements RateLimiter {
  /** One limiter pair per distinct limit: tier defaults plus per-key overrides, a handful in all. */
  private readonly pairs = new Map<number, LimiterPair>();
  /** When the store last failed; null while it is healthy. */
  private failedAt: number | null = null;
  private readonly onReady = (): void => this.markHealthy();
  private readonly onError = (error: Error): void => this.markFailed(error);

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly logger: Logger | undefined,
  ) {
    redis.on('ready', this.onReady);
    // Also keeps ioredis from printing "Unhandled error event" on every reconnect attempt.
    redis.on('error', this.onError);
  }

  get degraded(): boolean {
    return this.failedAt !== null || this.redis.status !== 'ready';
  }

  storeHealthy(): boolean {
    return !this.degraded;
  }

  async consume(subject: string, limitPerMinute: number): Promise<RateLimitResult> {
    const pair = this.pair(limitPerMinute);
    if (this.shouldTryStore()) {
      try {
        const res = await pair.store.consume(subject);
        this.markHealthy();
        return toResult(res, limitPerMinute, true);
      } catch (error) {
        if (error instanceof RateLimiterRes) {
          this.markHealthy();
          return toResult(error, limitPerMinute, false);
        }
        this.markFailed(error);
      }
    }
    try {
      return toResult(await pair.memory.consume(subject), limitPerMinute, true);
    } catch (error) {
      if (error instanceof RateLimiterRes) return toResult(error, limitPerMinute, false);
      throw error;
    }
  }

  close(): void {
    this.redis.off('ready', this.onReady);
    this.redis.off('error', this.onError);
  }

  private pair(limit: number): LimiterPair {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
    let pair = this.pairs.get(limit);
    if (pair === undefined) {
      // The same keyPrefix for every limit: a key whose override changes keeps its count.
      const common = { keyPrefix: this.keyPrefix, points: limit, duration: WINDOW_SECONDS };
      pair = {
        // ioredis client: no useRedisPackage (that flag is for node-redis v4+).
        store: new RateLimiterRedis({ ...common, storeClient: this.redis, rejectIfRedisNotReady: true }),
        memory: new RateLimiterMemory(common),
      };
      this.pairs.set(limit, pair);
    }
    return pair;
  }

  private shouldTryStore(): boolean {
    if (this.redis.status !== 'ready') return false;
    return this.failedAt === null || Date.now() - this.failedAt >= STORE_RETRY_MS;
  }

  private markFailed(error: unknown): void {
    if (this.failedAt === null) {
      this.logger?.warn(
        { err: error, key_prefix: this.keyPrefix },
        'rate-limit store unavailable, using per-process limits',
      );
    }
    this.failedAt = Date.now();
  }

  private markHealthy(): void {
    if (this.failedAt === null) return;
    this.failedAt = null;
    this.logger?.info({ key_prefix: this.keyPrefix }, 'rate-limit store recovered');
  }
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  return new SharedRateLimiter(options.redis, options.keyPrefix, options.logger);
}
