import { AllowedPorts } from './allowed-ports.js';
import { ipFamily, normalizeHost, parseAuthority } from './host-names.js';

export interface AllowedHostEntry {
  host: string;
  /** Absent: the host's address is exempt on every port the guard allows (allowed-ports.ts). */
  port?: number;
}

/**
 * The operator's exemptions from the address guard (`BROWSER_ALLOWED_HOSTS`, `WEBHOOK_ALLOWED_HOSTS`). An exempt host:port
 * skips the address check entirely — that is how tests reach their own pages on 127.0.0.1 — so
 * entries are exact: no wildcards, and a port, when given, is the only port exempted. Which ports
 * may be reached at all is the other half of the operator's choice (`BROWSER_ALLOWED_PORTS`):
 * an entry with a port opens that port; one without leaves the host on the allowed ports.
 */
export class AllowedHosts {
  /** host → its exempt ports, or 'any'. */
  private readonly byHost = new Map<string, Set<number> | 'any'>();

  constructor(
    entries: readonly AllowedHostEntry[] = [],
    /** Ports any allowed host may be reached on: 80 and 443 unless the operator adds more. */
    readonly ports: AllowedPorts = new AllowedPorts(),
  ) {
    for (const { host, port } of entries) {
      const canonical = normalizeHost(host);
      if (canonical === null) throw new Error(`not a host name or IP address: "${host}"`);
      const current = this.byHost.get(canonical);
      if (port === undefined || current === 'any') this.byHost.set(canonical, 'any');
      else if (current === undefined) this.byHost.set(canonical, new Set([port]));
      else current.add(port);
    }
  }

  /**
   * Reads entries of the form `host`, `host:port`, `[v6]`, `[v6]:port` (or a bare IPv6 address).
   * Blank entries are skipped so that a trailing comma in the variable is harmless.
   */
  static parse(
    list: readonly string[],
    ports?: AllowedPorts,
    variable = 'BROWSER_ALLOWED_HOSTS',
  ): AllowedHosts {
    const entries: AllowedHostEntry[] = [];
    for (const raw of list) {
      const text = raw.trim();
      if (text === '') continue;
      const authority = parseAuthority(text);
      // Names are restricted to DNS characters: a `*.example.com` that silently matched nothing
      // would leave an operator believing a wildcard works.
      if (authority === null || (ipFamily(authority.host) === 0 && !/^[a-z0-9_.-]+$/.test(authority.host))) {
        throw new Error(`${variable}: malformed entry "${raw}" (expected host, host:port or [v6]:port)`);
      }
      entries.push(authority);
    }
    return new AllowedHosts(entries, ports);
  }

  /** Whether `hostname` (any spelling: case, brackets, trailing dot) at `port` is exempt. */
  allows(hostname: string, port: number): boolean {
    if (this.byHost.size === 0) return false;
    const canonical = normalizeHost(hostname);
    if (canonical === null) return false;
    const ports = this.byHost.get(canonical);
    return ports === 'any' || (ports !== undefined && ports.has(port));
  }

  /**
   * Whether the guard may connect to `port` of `hostname` at all: an allowed port, or the port of a
   * `host:port` entry naming this host. (Whether its address may be reached is a separate check.)
   */
  allowsPort(hostname: string, port: number): boolean {
    if (this.ports.has(port)) return true;
    const canonical = normalizeHost(hostname);
    const ports = canonical === null ? undefined : this.byHost.get(canonical);
    return ports instanceof Set && ports.has(port);
  }

  get size(): number {
    return this.byHost.size;
  }
}
