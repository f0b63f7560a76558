import type { RequestHandler, Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { KeyStore } from '@switchboard/keys';
import type { RateLimiter } from '@switchboard/ratelimit';
import { failureBucket } from '../http/client-ip.js';
import type { GatewayMetrics } from '../ops/metrics.js';
import type { KeyFreshness } from '../ops/nats-liveness.js';
import { keyAllowsIp } from './ip-allowlists.js';

/** The bearer token of a request, or undefined when the header is missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer ([^\s]+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

/**
 * Failed authentication spends a per-address budget instead of any key's, so a flood of bad keys
 * cannot exhaust a real key's quota and guessing is slow. Only failures are limited: a correct
 * credential is never refused here, because behind an ingress every client shares one address
 * and one client's failures must not lock the others out. Failures are counted cluster-wide in
 * Redis, per IPv4 address or IPv6 /64; once a bucket is over the limit this replica answers its
 * failures locally until the window resets, without another Redis round trip.
 */
export class AuthFailureGuard {
  private readonly blockedUntil = new Map<string, number>();

  /** `kind` keeps separate budgets apart (API keys, the admin token) in the shared counters. */
  constructor(
    private readonly limiter: RateLimiter,
    private readonly kind: string,
    private readonly perMinute: number,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Counts one failure from `ip` and returns the error to answer with. */
  async fail(ip: string, error: SwitchboardError): Promise<SwitchboardError> {
    const bucket = failureBucket(ip);
    const blocked = this.blockedSeconds(bucket);
    if (blocked !== undefined) return this.limited(blocked);
    const state = await this.limiter.consume(`${this.kind}:${bucket}`, this.perMinute);
    if (state.allowed) return error;
    this.block(bucket, state.resetSeconds);
    return this.limited(state.resetSeconds);
  }

  private blockedSeconds(bucket: string): number | undefined {
    const until = this.blockedUntil.get(bucket);
    if (until === undefined) return undefined;
    const now = Date.now();
    if (until <= now) {
      this.blockedUntil.delete(bucket);
      return undefined;
    }
    return Math.ceil((until - now) / 1000);
  }

  private block(bucket: string, seconds: number): void {
    const now = Date.now();
    if (this.blockedUntil.size > 10_000) {
      for (const [blocked, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(blocked);
    }
    this.blockedUntil.set(bucket, now + seconds * 1000);
  }

  private limited(resetSeconds: number): SwitchboardError {
    this.metrics.rateLimitRejections.inc({ reason: 'auth_failures' });
    return new SwitchboardError('rate_limited', {
      message: 'Too many failed authentication attempts from this address.',
      retryAfterSeconds: resetSeconds,
    });
  }
}

export interface AuthenticateDeps {
  keys: KeyStore;
  guard: AuthFailureGuard;
  /** Whether this replica's copy of the keys is recent enough to be trusted. */
  freshness: KeyFreshness;
}

/** API key authentication, then the key's own IP allowlist (API.md §1). */
export function authenticate({ keys, guard, freshness }: AuthenticateDeps): RequestHandler {
  // Synchronous on success: the hot path costs no promise and no round trip.
  return (req, res: Response, next) => {
    const ctx = res.locals.ctx;
    // Past the staleness bound a revocation may have been missed: refuse rather than guess.
    if (!freshness.keysFresh()) {
      throw new SwitchboardError('unavailable', {
        message: 'API keys cannot be verified right now (the key store is unreachable); retry shortly.',
        retryAfterSeconds: 5,
      });
    }
    const token = bearerToken(req.get('authorization'));
    const key = token ? keys.authenticate(token) : null;
    if (!key || token === undefined) {
      guard.fail(ctx.clientIp, new SwitchboardError('unauthorized')).then(next, next);
      return;
    }
    if (!keyAllowsIp(key.ip_allowlist, ctx.clientIp)) {
      throw new SwitchboardError('ip_not_allowed');
    }
    ctx.key = key;
    keys.touch(key.id);
    ctx.keyStillValid = () => keys.authenticate(token) !== null;
    next();
  };
}
