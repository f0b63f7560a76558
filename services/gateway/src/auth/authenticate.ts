import type { RequestHandler, Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { KeyStore } from '@switchboard/keys';
import type { RateLimiter } from '@switchboard/ratelimit';
import { failureBucket } from '../http/client-ip.js';
import type { GatewayMetrics } from '../ops/metrics.js';
import type { AccessCheck } from './access.js';

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
  /** Records last use. */
  keys: Pick<KeyStore, 'touch'>;
  guard: AuthFailureGuard;
  access: AccessCheck;
}

/** API key authentication, then the key's own IP allowlist, through AccessCheck. */
export function authenticate({ keys, guard, access }: AuthenticateDeps): RequestHandler {
  // Synchronous on success: the hot path costs no promise and no round trip.
  return (req, res: Response, next) => {
    const ctx = res.locals.ctx;
    const token = bearerToken(req.get('authorization'));
    const verdict = access.check(token, ctx.clientIp);
    if (verdict.error) {
      // Only a wrong key spends the address's failure budget; 403 and 503 are not guesses.
      if (verdict.error.code !== 'unauthorized') throw verdict.error;
      guard.fail(ctx.clientIp, verdict.error).then(next, next);
      return;
    }
    ctx.key = verdict.key;
    keys.touch(verdict.key.id);
    // What keeps a stream or socket of this request open: the same check, run again.
    ctx.recheckAccess = () => access.check(token, ctx.clientIp).error;
    next();
  };
}
