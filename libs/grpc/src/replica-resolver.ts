import { Resolver, lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** A worker's `host:port` (`[v6]:port` for an IPv6 literal), split. */
export interface WorkerTarget {
  host: string;
  port: number;
}

/** The addresses a host name stands for now; an IP literal stands for itself. */
export type ResolveHost = (host: string) => Promise<string[]>;

export function parseTarget(target: string): WorkerTarget {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !(port > 0 && port < 65_536)) {
    throw new Error(`not a host:port: ${JSON.stringify(target)}`);
  }
  return { host, port };
}

export function joinHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Resolution through `dnsServer` (`ip[:port]`) when one is named: every A and AAAA record, asked
 * afresh each time (a headless Service answers with one record per ready pod). Without one, the
 * system's resolver via getaddrinfo, as every other process on the node resolves: it honours
 * /etc/hosts and the pod's search domains (a bare `llm`), which a plain DNS query would not.
 */
export function hostResolver(dnsServer?: string): ResolveHost {
  if (dnsServer === undefined) {
    return async (host) => {
      if (isIP(host) !== 0) return [host];
      const found = await lookup(host, { all: true });
      return unique(found.map((entry) => entry.address));
    };
  }
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  resolver.setServers([dnsServer]);
  return async (host) => {
    if (isIP(host) !== 0) return [host];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
    return unique([
      ...(v4.status === 'fulfilled' ? v4.value : []),
      ...(v6.status === 'fulfilled' ? v6.value : []),
    ]);
  };
}

function unique(addresses: string[]): string[] {
  return [...new Set(addresses)];
}
