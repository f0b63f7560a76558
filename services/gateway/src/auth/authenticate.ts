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
 * Failed authentication spends a per-IP budget instead of any key's, so guessing keys is slow
 * and a flood of bad keys cannot exhaust a real key's quota.
 */
export class AuthFailureGuard {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly perMinute: number,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Rejects an address that already used up its failures for this window. */
  async check(ip: string): Promise<void> {
    const state = await this.limiter.peek(`authfail:${ip}`, this.perMinute);
    if (!state.allowed) throw this.limited(state.resetSeconds);
  }

  /** Counts one failure and returns the error to answer with. */
  async fail(ip: string, error: SwitchboardError): Promise<SwitchboardError> {
    const state = await this.limiter.consume(`authfail:${ip}`, this.perMinute);
    return state.allowed ? error : this.limited(state.resetSeconds);
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
  return async (req, res: Response, next) => {
    const ctx = res.locals.ctx;
    await guard.check(ctx.clientIp);
    const token = bearerToken(req.get('authorization'));
    const key = token ? keys.authenticate(token) : null;
    if (!key) {
      throw await guard.fail(ctx.clientIp, new SwitchboardError('unauthorized'));
    }
    if (!keyAllowsIp(key.ip_allowlist, ctx.clientIp)) {
      throw new SwitchboardError('ip_not_allowed');
    }
    ctx.key = key;
    ctx.logger = ctx.logger.child({ key_id: key.id });
    keys.touch(key.id);
    next();
  };
}
