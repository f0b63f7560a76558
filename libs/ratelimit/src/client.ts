import { Redis, type RedisOptions } from 'ioredis';

/**
 * ioredis settings for a rate-limit store, which sits on every request's path and must never
 * make a request wait on a Redis that is down or hung. ioredis's defaults do the opposite
 * (queue commands while disconnected and retry them up to 20 reconnects), so:
 * - enableOfflineQueue false: while not connected, a command fails at once instead of queueing;
 * - maxRetriesPerRequest 0: commands in flight when the connection drops are failed at the first
 *   reconnect attempt (with 1, ioredis waits for a second failed attempt before flushing them);
 * - autoResendUnfulfilledCommands false: an INCR that may already have counted is not replayed
 *   after a reconnect, which would count it twice;
 * - commandTimeout: a Redis that accepts connections but does not answer (paused, overloaded)
 *   still fails the call quickly;
 * - connectTimeout short and retryStrategy capped at 500 ms: the client keeps reconnecting in the
 *   background, so the limiter leaves its fallback soon after Redis is back;
 * - enableAutoPipelining: under load, the limit checks of concurrent requests issued in the same
 *   event-loop tick go out in one write, saving a syscall per request on the hot path.
 */
export const rateLimitRedisOptions: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  commandTimeout: 250,
  connectTimeout: 1000,
  retryStrategy: (times: number) => Math.min(times * 100, 500),
  enableAutoPipelining: true,
};

export function createRedisClient(url: string, overrides: RedisOptions = {}): Redis {
  return new Redis(url, { ...rateLimitRedisOptions, ...overrides });
}
