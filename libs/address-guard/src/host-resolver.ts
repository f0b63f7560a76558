import { promises as dns } from 'node:dns';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Turns a host name into every address it stands for; injectable so tests use a real local DNS server. */
export interface HostResolver {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
}

/** The name does not resolve (no such name, no address records, or DNS did not answer). */
export class HostUnresolvedError extends Error {
  constructor(
    readonly hostname: string,
    options?: { cause?: unknown },
  ) {
    super(`${hostname} does not resolve`, options);
    this.name = 'HostUnresolvedError';
  }
}

/** The operating system's resolver (getaddrinfo: /etc/hosts, then the configured DNS), all answers. */
export function systemResolver(): HostResolver {
  return {
    async resolve(hostname) {
      let answers: { address: string; family: number }[];
      try {
        answers = await dns.lookup(hostname, { all: true });
      } catch (error) {
        throw new HostUnresolvedError(hostname, { cause: error });
      }
      return nonEmpty(
        hostname,
        answers.flatMap(({ address, family }) => (family === 4 || family === 6 ? [{ address, family }] : [])),
      );
    },
  };
}

export interface DnsServerResolverOptions {
  /** Per-query timeout; c-ares retries `tries` times before giving up. */
  timeoutMs?: number;
  tries?: number;
}

/**
 * Asks the given DNS servers (`host` or `host:port`) directly, bypassing /etc/hosts: for operators
 * who want the browser's names resolved by a specific server (`BROWSER_DNS_SERVERS`), and for tests.
 * A name with only A or only AAAA records is fine (ENODATA for the other family).
 */
export function dnsServerResolver(
  servers: readonly string[],
  options: DnsServerResolverOptions = {},
): HostResolver {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
  resolver.setServers(servers);
  return {
    async resolve(hostname) {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const answers: ResolvedAddress[] = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      // Only "no records of this type" is an answer; a failed or timed-out half says nothing
      // about the name, and answering from the other half would make the outcome depend on timing.
      for (const half of [v4, v6]) {
        if (half.status === 'rejected' && (half.reason as { code?: unknown }).code !== 'ENODATA') {
          throw new HostUnresolvedError(hostname, { cause: half.reason });
        }
      }
      return nonEmpty(hostname, answers);
    },
  };
}

function nonEmpty(hostname: string, answers: ResolvedAddress[]): ResolvedAddress[] {
  if (answers.length === 0) throw new HostUnresolvedError(hostname);
  return answers;
}
