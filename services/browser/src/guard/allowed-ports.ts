/**
 * The web's own ports. Pages reach other ports only where the operator allows them: a session
 * that could reach any port of a public host could send mail (25), speak to databases or scan.
 */
export const WEB_PORTS: readonly number[] = [80, 443];

/**
 * The ports the address guard lets sessions connect to on any host it allows: 80, 443 and the
 * operator's additions (`BROWSER_ALLOWED_PORTS`). A `host:port` entry of `BROWSER_ALLOWED_HOSTS`
 * allows its own port besides (allowed-hosts.ts).
 */
export class AllowedPorts {
  private readonly ports: ReadonlySet<number>;

  constructor(extra: readonly number[] = []) {
    this.ports = new Set([...WEB_PORTS, ...extra]);
  }

  /** Reads comma-separated port numbers (1–65535); blank entries are skipped. */
  static parse(list: readonly string[]): AllowedPorts {
    const extra: number[] = [];
    for (const raw of list) {
      const text = raw.trim();
      if (text === '') continue;
      const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
      if (!(port >= 1 && port <= 65535)) {
        throw new Error(`BROWSER_ALLOWED_PORTS: "${raw}" is not a port number (1-65535)`);
      }
      extra.push(port);
    }
    return new AllowedPorts(extra);
  }

  has(port: number): boolean {
    return this.ports.has(port);
  }

  /** Sorted, for messages and logs. */
  list(): number[] {
    return [...this.ports].sort((a, b) => a - b);
  }
}
