import { SwitchboardError } from '@switchboard/errors';
import type { AllowedHosts } from './allowed-hosts.js';
import { blockedRange } from './blocked-addresses.js';
import { ipFamily, isLocalhostName, normalizeHost } from './host-names.js';
import { HostUnresolvedError, type HostResolver, type ResolvedAddress } from './host-resolver.js';

/** `url_not_allowed`, with the rule that refused it (`scheme`, `credentials`, or a range name). */
export class UrlNotAllowedError extends SwitchboardError {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super('url_not_allowed', { param: 'url', message });
  }
}

/** The port a URL connects to: its own, else its scheme's default. */
export function portOf(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

export interface ResolveDeps {
  allowed: AllowedHosts;
  resolver: HostResolver;
}

/**
 * Resolves `hostname` once and checks every address it stands for: one blocked answer refuses the
 * whole name, since the caller cannot tell which answer a later connection would use. The address
 * returned is the one to connect to — never the name again, so DNS cannot change between check
 * and connect. An exempt host:port is resolved but not checked. Whatever the address, the port
 * must be one the guard allows.
 *
 * @throws UrlNotAllowedError for a blocked address or port; HostUnresolvedError when the name does not resolve.
 */
export async function resolveAllowed(
  hostname: string,
  port: number,
  { allowed, resolver }: ResolveDeps,
): Promise<ResolvedAddress> {
  const host = normalizeHost(hostname);
  if (host === null) throw new HostUnresolvedError(hostname);
  const exempt = allowed.allows(host, port);
  const family = ipFamily(host);
  if (family !== 0) {
    const range = exempt ? null : blockedRange(host);
    if (range !== null) throw blockedAddress(range);
    if (!allowed.allowsPort(host, port)) throw portNotAllowed(port, allowed);
    return { address: host, family };
  }
  if (!exempt && isLocalhostName(host)) throw blockedAddress('loopback');

  let answers: ResolvedAddress[];
  try {
    answers = await resolver.resolve(host);
  } catch (error) {
    throw error instanceof HostUnresolvedError ? error : new HostUnresolvedError(host, { cause: error });
  }
  const first = answers[0];
  if (first === undefined) throw new HostUnresolvedError(host);
  if (!exempt) {
    for (const { address } of answers) {
      const range = blockedRange(address);
      if (range !== null) throw blockedAddress(range);
    }
  }
  if (!allowed.allowsPort(host, port)) throw portNotAllowed(port, allowed);
  return first;
}

/** The address is judged first, so a blocked address is reported as such on any port. */
export function portNotAllowed(port: number, allowed: AllowedHosts): UrlNotAllowedError {
  return new UrlNotAllowedError(
    'port',
    `Port ${port} may not be reached; only ports ${allowed.ports.describe()} are.`,
  );
}

export function blockedAddress(range: string): UrlNotAllowedError {
  // The range, not the address: a resolved internal address is not the caller's business.
  return new UrlNotAllowedError(range, `The URL's host is in a blocked address range (${range}).`);
}
