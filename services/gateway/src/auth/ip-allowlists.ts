import type { RequestHandler } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { CidrSet, clientIp } from '../http/client-ip.js';
import type { AccessCheck } from './access.js';

/**
 * Works out the client address once and checks the cluster-wide allowlist, for every
 * path (the admin API and the docs too), before any key is looked at.
 */
export function clusterAllowlist(
  access: Pick<AccessCheck, 'clusterAllows'>,
  trustedProxies: CidrSet,
): RequestHandler {
  return (req, res, next) => {
    const ctx = res.locals.ctx;
    ctx.clientIp = clientIp(req.socket.remoteAddress ?? '', req.get('x-forwarded-for'), trustedProxies);
    if (!access.clusterAllows(ctx.clientIp)) {
      next(new SwitchboardError('ip_not_allowed'));
      return;
    }
    next();
  };
}

// Keys are few and their lists rarely change, so matchers are cached per list contents.
const keyLists = new Map<string, CidrSet>();

export function keyAllowsIp(allowlist: readonly string[], ip: string): boolean {
  if (allowlist.length === 0) return true;
  const cacheKey = allowlist.join(',');
  let set = keyLists.get(cacheKey);
  if (!set) {
    if (keyLists.size > 10_000) keyLists.clear();
    set = new CidrSet(allowlist);
    keyLists.set(cacheKey, set);
  }
  return set.has(ip);
}
