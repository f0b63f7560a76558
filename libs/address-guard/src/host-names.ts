import { isIP } from 'node:net';

/**
 * Host names in one canonical form, so that the allow list, the URL check and the proxy all
 * compare the same strings. The WHATWG URL parser does the work: it lowercases, applies IDNA,
 * decodes percent-escapes and turns every numeric IPv4 spelling (`2130706433`, `0x7f.1`,
 * `0177.0.0.1`) into dotted form — the same reading Chromium gives the host, which is what matters.
 */

/** The canonical host: lowercase, IPv6 without brackets, no trailing dot; null when not a host. */
export function normalizeHost(host: string): string | null {
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const bare = bracketed ? host.slice(1, -1) : host;
  if (bare === '' || /[\s/?#@\\[\]]/.test(bare)) return null;
  if ((bracketed || bare.includes(':')) && isIP(bare) !== 6) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return null;
  }
  if (hostname.startsWith('[')) return hostname.slice(1, -1);
  // `example.com.` and `example.com` are the same name; one spelling must not dodge a rule.
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
}

export interface Authority {
  host: string;
  port: number | undefined;
}

/**
 * Reads `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal (then without port):
 * the form of allow-list entries and of `CONNECT` targets. The port is read here, not by the URL
 * parser, which would drop a scheme's default port (`host:80`) and so lose it.
 */
export function parseAuthority(text: string): Authority | null {
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d{1,5}))?$/.exec(text);
  const rawHost = match
    ? match[1] !== undefined
      ? `[${match[1]}]`
      : match[2]
    : isIP(text) === 6
      ? text
      : null;
  if (rawHost === null || rawHost === undefined) return null;
  const host = normalizeHost(rawHost);
  if (host === null) return null;
  const portText = match?.[3];
  if (portText === undefined) return { host, port: undefined };
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : null;
}

/** `localhost` and anything under it resolve to loopback by convention (RFC 6761), whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** 4 or 6 for an IP literal (already without brackets), 0 for a name. */
export function ipFamily(host: string): 0 | 4 | 6 {
  const family = isIP(host);
  return family === 4 || family === 6 ? family : 0;
}
