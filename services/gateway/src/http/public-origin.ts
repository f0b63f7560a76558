import type { Request } from 'express';
import { type CidrSet, normalizeIp } from './client-ip.js';

/** Host names and ports as they may appear in Host / X-Forwarded-Host; anything else is ignored. */
const HOST = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;

/** The right-most value of a comma-separated forwarding header: the one the nearest proxy wrote. */
function lastValue(header: string | undefined): string | undefined {
  const value = header?.split(',').at(-1)?.trim();
  return value ? value : undefined;
}

/**
 * The origin (`https://api.example.com`) clients reach this gateway at, for URLs it hands out
 * such as `devtools_url`. PUBLIC_BASE_URL wins when configured. Otherwise the request says: behind
 * a trusted proxy (TRUSTED_PROXIES) its X-Forwarded-Proto and X-Forwarded-Host are believed — a TLS
 * ingress talks plain HTTP to the gateway, yet the client came over HTTPS — and from anyone else
 * only the socket (TLS or not) and the Host header count.
 */
export function publicOrigin(
  req: Request,
  trustedProxies: CidrSet,
  publicBaseUrl: string | undefined,
): string {
  if (publicBaseUrl !== undefined) return publicBaseUrl;
  const viaTrustedProxy =
    !trustedProxies.empty && trustedProxies.has(normalizeIp(req.socket.remoteAddress ?? ''));
  const encrypted = 'encrypted' in req.socket && req.socket.encrypted === true;
  let scheme = encrypted ? 'https' : 'http';
  let host = req.get('host');
  if (viaTrustedProxy) {
    const proto = lastValue(req.get('x-forwarded-proto'))?.toLowerCase();
    if (proto === 'https' || proto === 'http') scheme = proto;
    host = lastValue(req.get('x-forwarded-host')) ?? host;
  }
  return `${scheme}://${host !== undefined && HOST.test(host) ? host : 'localhost'}`;
}

/** The WebSocket form of an origin: `wss://` for an HTTPS one. */
export function webSocketOrigin(origin: string): string {
  return origin.replace(/^http/, 'ws');
}
