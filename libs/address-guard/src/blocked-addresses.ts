import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * The name of the blocked range `address` falls in, or null for a public unicast address.
 *
 * Everything ipaddr.js does not call `unicast` is blocked: loopback, RFC 1918, link-local (with
 * the 169.254.169.254 metadata address), CGNAT, multicast, broadcast, and the reserved,
 * documentation, benchmarking and relay ranges. IPv6 forms that carry an IPv4 address
 * (mapped, compatible, NAT64) are judged by that address, since that is where the packets go;
 * 6to4 and Teredo are blocked outright, as their far end cannot be judged from here.
 */
export function blockedRange(address: string): string | null {
  // isIP first: ipaddr.js also reads classful spellings (`127.1`, `0x7f.1`) that DNS never returns.
  if (isIP(address) === 0) return 'invalid';
  let parsed: IPv4 | IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'invalid';
  }
  return parsed.kind() === 'ipv4' ? ipv4Blocked(parsed as IPv4) : ipv6Blocked(parsed as IPv6);
}

function ipv4Blocked(address: IPv4): string | null {
  const range = address.range();
  return range === 'unicast' ? null : range;
}

function ipv6Blocked(address: IPv6): string | null {
  const range = address.range();
  const parts = address.parts;
  const [p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0] = parts;
  const embedded = (): IPv4 => ipaddr.fromByteArray(address.toByteArray().slice(12)) as IPv4;

  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return ipv4Blocked(embedded());
    case 'rfc6052':
      // The well-known NAT64 prefix 64:ff9b::/96 reaches the embedded address; the local-use
      // 64:ff9b:1::/48 reaches whatever the operator's translator says, so it stays blocked.
      return p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0 ? ipv4Blocked(embedded()) : range;
    case 'unicast':
      break;
    default:
      return range;
  }
  // Deprecated IPv4-compatible ::a.b.c.d (:: and ::1 were matched above as unspecified/loopback).
  if (p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0) return ipv4Blocked(embedded());
  // Only 2000::/3 is allocated for global unicast; the rest of the space is reserved by IANA.
  if ((p0 & 0xe000) !== 0x2000) return 'reserved';
  return null;
}
