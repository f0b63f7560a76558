import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Matches addresses against a CIDR list; IPv4-mapped IPv6 addresses match as IPv4. */
export class CidrSet {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(cidrs: readonly string[]) {
    this.empty = cidrs.length === 0;
    for (const cidr of cidrs) {
      const [written = '', bits] = cidr.split('/');
      const ip = normalizeIp(written);
      const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
      let prefix = bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits);
      // An IPv4-mapped IPv6 network (::ffff:10.0.0.0/104) is the IPv4 network it maps.
      if (ip !== written && family === 'ipv4' && bits !== undefined) prefix = Math.max(0, prefix - 96);
      this.list.addSubnet(ip, prefix, family);
    }
  }

  has(ip: string): boolean {
    const normal = normalizeIp(ip);
    const family = isIP(normal);
    if (family === 0) return false;
    return this.list.check(normal, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/**
 * `::ffff:10.0.0.1` → `10.0.0.1`; strips brackets, ports (`203.0.113.5:4711`,
 * `[2001:db8::1]:4711`, as some proxies write X-Forwarded-For hops) and zone ids. Anything else
 * as is.
 */
export function normalizeIp(raw: string): string {
  let ip = raw.trim();
  const bracketed = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(ip);
  if (bracketed) ip = bracketed[1]!;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(ip);
  if (v4WithPort) ip = v4WithPort[1]!;
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped?.[1] ?? ip;
}

/**
 * The client address: the socket peer, unless that peer is a trusted proxy; then
 * X-Forwarded-For is walked from the right and the first hop that is not a trusted proxy wins.
 * Hops further left were written by the client and cannot be believed.
 */
export function clientIp(socketAddress: string, forwardedFor: string | undefined, trusted: CidrSet): string {
  let candidate = normalizeIp(socketAddress);
  if (trusted.empty || !forwardedFor || !trusted.has(candidate)) return candidate;
  const hops = forwardedFor
    .split(',')
    .map((hop) => normalizeIp(hop))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i] as string;
    if (isIP(hop) === 0) return candidate; // garbage: stop at the last address we could trust
    candidate = hop;
    if (!trusted.has(hop)) return hop;
  }
  return candidate;
}

/**
 * The unit failed authentications are counted by: the address itself for IPv4, its /64 for IPv6,
 * because one IPv6 host usually holds a whole /64 and could otherwise rotate through it.
 */
export function failureBucket(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const network = ipaddr.IPv6.parse(ip).parts.slice(0, 4);
  return `${network.map((part) => part.toString(16)).join(':')}::/64`;
}
