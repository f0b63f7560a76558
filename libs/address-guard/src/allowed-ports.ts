/**
 * The web's own ports. Pages reach other ports only where the operator allows them: a session
 * that could reach any port of a public host could send mail (25), speak to databases or scan.
 */
export const WEB_PORTS: readonly number[] = [80, 443];

/**
 * The ports the address guard lets a connection reach on any host it allows: 80, 443 and the
 * operator's additions (the browser's `BROWSER_ALLOWED_PORTS`), or every port. A `host:port` entry of
 * the allowed hosts allows its own port besides (allowed-hosts.ts).
 */
export class AllowedPorts {
  private readonly ports: ReadonlySet<number> | 'any';

  constructor(extra: readonly number[] | 'any' = []) {
    this.ports = extra === 'any' ? 'any' : new Set([...WEB_PORTS, ...extra]);
  }

  /**
   * Every port: for calls whose target names its own port on purpose (a webhook endpoint), where
   * the address, not the port, is what keeps the cluster's insides out of reach.
   */
  static any(): AllowedPorts {
    return new AllowedPorts('any');
  }

  /** Reads comma-separated port numbers (1–65535); blank entries are skipped. */
  static parse(list: readonly string[], variable = 'BROWSER_ALLOWED_PORTS'): AllowedPorts {
    const extra: number[] = [];
    for (const raw of list) {
      const text = raw.trim();
      if (text === '') continue;
      const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
      if (!(port >= 1 && port <= 65535)) {
        throw new Error(`${variable}: "${raw}" is not a port number (1-65535)`);
      }
      extra.push(port);
    }
    return new AllowedPorts(extra);
  }

  has(port: number): boolean {
    return this.ports === 'any' ? port >= 1 && port <= 65535 : this.ports.has(port);
  }

  /** Sorted, for messages and logs. */
  list(): number[] {
    return this.ports === 'any' ? [] : [...this.ports].sort((a, b) => a - b);
  }

  /** For messages: the ports, or "1-65535". */
  describe(): string {
    return this.ports === 'any' ? '1-65535' : this.list().join(', ');
  }
}
