import type { RequestHandler, Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import type { KeyStore } from '@switchboard/keys';
import type { RateLimiter } from '@switchboard/ratelimit';
import type { GatewayMetrics } from '../ops/metrics.js';
import { keyAllowsIp } from './ip-allowlists.js';

/** The bearer token of a request, or undefined when the header is missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer ([^\s]+)$/i.exec(header.trim()) : null;
  return match?.[1];
}

/**
 * Failed authentication spends a per-IP budget instead of any key's, so a flood of bad keys
 * cannot exhaust a real key's quota and guessing is slow. Failures are counted cluster-wide in
 * Redis; once an address is over the limit this replica refuses it locally until the window
 * resets, so successful requests never pay a second Redis round trip for the check.
 */
export class AuthFailureGuard {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly perMinute: number,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Rejects an address that used up its failures in this window. */
  check(ip: string): void {
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return;
    const now = Date.now();
    if (until <= now) {
      this.blockedUntil.delete(ip);
      return;
    }
    throw this.limited(Math.ceil((until - now) / 1000));
  }

  /** Counts one failure and returns the error to answer with. */
  async fail(ip: string, error: SwitchboardError): Promise<SwitchboardError> {
    const state = await this.limiter.consume(`authfail:${ip}`, this.perMinute);
    if (state.allowed) return error;
    this.block(ip, state.resetSeconds);
    return this.limited(state.resetSeconds);
  }

  private block(ip: string, seconds: number): void {
    const now = Date.now();
    if (this.blockedUntil.size > 10_000) {
      for (const [blocked, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(blocked);
    }
    this.blockedUntil.set(ip, now + seconds * 1000);
  }

  private limited(resetSeconds: number): SwitchboardError {
    this.metrics.rateLimitRejections.inc({ reason: 'auth_failures' });
    return new SwitchboardError('rate_limited', {
      message: 'Too many failed authentication attempts from this address.',
      retryAfterSeconds: resetSeconds,
    });
  }
}

/** API key authentication, then the key's own IP allowlist (API.md §1). */
export function authenticate(keys: KeyStore, guard: AuthFailureGuard): RequestHandler {
  // Synchronous on success: the hot path costs no promise and no round trip.
  return (req, res: Response, next) => {
    const ctx = res.locals.ctx;
    guard.check(ctx.clientIp);
    const token = bearerToken(req.get('authorization'));
    const key = token ? keys.authenticate(token) : null;
    if (!key) {
      guard.fail(ctx.clientIp, new SwitchboardError('unauthorized')).then(next, next);
      return;
    }
    if (!keyAllowsIp(key.ip_allowlist, ctx.clientIp)) {
      throw new SwitchboardError('ip_not_allowed');
    }
    ctx.key = key;
    keys.touch(key.id);
    next();
  };
}
