import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@switchboard/telemetry';

/**
 * How long a held place outlives the replica that took it: a gateway that dies mid-call frees its
 * places within this, because each is a lease its holder renews (every third of it) while the
 * call lasts.
 */
export const DEFAULT_LEASE_MS = 30_000;

/** A place taken with `acquire`; give it back exactly once, when the call ends however it ends. */
export interface CallSlot {
  release(): void;
}

export interface ConcurrencyLimiter {
  /**
   * Takes one of `limit` places of `subject` (a key and a capability) across every replica, or
   * answers null when all are held.
   */
  acquire(subject: string, limit: number): Promise<CallSlot | null>;
  /** Places this replica holds now, by subject (tests and the dashboard). */
  held(subject: string): number;
  /** Stops renewing; places still held lapse with their leases. */
  close(): void;
}

export interface ConcurrencyLimiterOptions {
  /** An ioredis client made by createRedisClient() (commands fail fast); not closed by us. */
  redis: Redis;
  /** Namespace of the lease sets in Redis, e.g. `sb:calls`. */
  keyPrefix: string;
  /** DEFAULT_LEASE_MS unless a test needs leases to lapse sooner. */
  leaseMs?: number;
  logger?: Logger;
}

// Both scripts read the time from Redis, so gateways with skewed clocks agree on which leases
// have lapsed. A lease set is a sorted set of holder ids scored by their expiry, in milliseconds.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1`;

// Renewing puts a lease back even when it vanished (Redis restarted empty): the call it stands
// for is still running, and counting it keeps the limit true.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + tonumber(ARGV[1]), ARGV[i + 1])
  redis.call('PEXPIRE', key, tonumber(ARGV[1]))
end
return #KEYS`;

interface Lease {
  readonly key: string;
  readonly member: string;
  readonly subject: string;
}

/**
 * Places shared by every gateway replica through Redis. While Redis cannot be reached, places
 * are counted by this replica alone, as the rate limiter does: each replica then admits up to the
 * limit on its own — degraded, never failing every call and never waiting on a broken store.
 */
class SharedConcurrencyLimiter implements ConcurrencyLimiter {
  /** Leases held in Redis, renewed together. */
  private readonly leases = new Set<Lease>();
  /** Places counted locally while Redis was unreachable, by subject. */
  private readonly local = new Map<string, number>();
  private readonly renewTimer: NodeJS.Timeout;
  private warned = false;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly leaseMs: number,
    private readonly logger: Logger | undefined,
  ) {
    this.renewTimer = setInterval(() => void this.renew(), leaseMs / 3);
    this.renewTimer.unref();
  }

  async acquire(subject: string, limit: number): Promise<CallSlot | null> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be ≥ 1, got ${limit}`);
    const lease: Lease = { key: `${this.keyPrefix}:${subject}`, member: randomUUID(), subject };
    let taken: unknown;
    try {
      taken = await this.redis.eval(ACQUIRE, 1, lease.key, lease.member, limit, this.leaseMs);
    } catch (error) {
      return this.acquireLocally(subject, limit, error);
    }
    this.warned = false;
    if (taken !== 1) return null;
    this.leases.add(lease);
    return {
      release: once(() => {
        this.leases.delete(lease);
        this.redis.zrem(lease.key, lease.member).catch((error: unknown) => {
          // The lease lapses on its own within leaseMs.
          this.logger?.warn({ err: error }, 'could not give back a call place');
        });
      }),
    };
  }

  held(subject: string): number {
    let count = this.local.get(subject) ?? 0;
    for (const lease of this.leases) if (lease.subject === subject) count += 1;
    return count;
  }

  close(): void {
    clearInterval(this.renewTimer);
  }

  private acquireLocally(subject: string, limit: number, error: unknown): CallSlot | null {
    if (!this.warned) {
      this.warned = true;
      this.logger?.warn({ err: error }, 'call-place store unavailable, counting places per replica');
    }
    // Places held in Redis by this replica still count: they are running here.
    if (this.held(subject) >= limit) return null;
    this.local.set(subject, (this.local.get(subject) ?? 0) + 1);
    return {
      release: once(() => {
        const left = (this.local.get(subject) ?? 1) - 1;
        if (left > 0) this.local.set(subject, left);
        else this.local.delete(subject);
      }),
    };
  }

  private async renew(): Promise<void> {
    if (this.leases.size === 0) return;
    const leases = [...this.leases];
    try {
      await this.redis.eval(
        RENEW,
        leases.length,
        ...leases.map((lease) => lease.key),
        this.leaseMs,
        ...leases.map((lease) => lease.member),
      );
    } catch (error) {
      // Tried again at the next tick, well within the lease.
      this.logger?.warn({ err: error }, 'could not renew call places');
    }
  }
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}

export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  const { redis, keyPrefix, leaseMs = DEFAULT_LEASE_MS, logger } = options;
  return new SharedConcurrencyLimiter(redis, keyPrefix, leaseMs, logger);
}
