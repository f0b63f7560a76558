import { BlockList, isIP } from 'node:net';

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

/** `::ffff:10.0.0.1` → `10.0.0.1`; strips brackets and zone ids. Anything else as is. */
export function normalizeIp(raw: string): string {
  let ip = raw.trim();
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const zone = ip.indexOf('%');
  if (zone !== -1) ip = ip.slice(0, zone);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped?.[1] ?? ip;
}

/**
 * The client address of API.md §1: the socket peer, unless that peer is a trusted proxy; then
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
