import type { NatsConnection } from 'nats';

/** Whether this replica's copy of the API keys may still be trusted. */
export interface KeyFreshness {
  keysFresh(): boolean;
}

export interface LivenessOptions {
  /** How often NATS is pinged. */
  probeIntervalMs: number;
  /** Silence after which the replica reports itself not ready. */
  unreadyAfterMs: number;
  /** Silence after which cached keys are no longer honoured (KEYS_MAX_STALENESS_MS). */
  maxStalenessMs: number;
}

/**
 * Knows when NATS was last heard from, by pinging it. The client library alone notices a broker
 * that stopped answering (a partition, a frozen process) only after minutes of missed pings, and
 * the key view would meanwhile keep honouring keys that may have been revoked elsewhere. A ping
 * that gets no answer simply leaves `lastHeardAt` behind; only one is outstanding at a time.
 */
export class NatsLiveness implements KeyFreshness {
  private lastHeardAt = Date.now();
  private probing = false;
  private probeStartedAt = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: LivenessOptions,
  ) {
    this.timer = setInterval(() => this.probe(), options.probeIntervalMs);
    this.timer.unref();
  }

  /** Milliseconds since NATS last answered. */
  silentForMs(): number {
    return Date.now() - this.lastHeardAt;
  }

  /** Answered recently enough for the replica to take traffic (readiness, admin calls). */
  get reachable(): boolean {
    return !this.nc.isClosed() && this.silentForMs() <= this.options.unreadyAfterMs;
  }

  keysFresh(): boolean {
    return this.silentForMs() <= this.options.maxStalenessMs;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private probe(): void {
    // A ping lost with a frozen broker may never settle: after a while, send another one.
    if (this.probing && Date.now() - this.probeStartedAt < this.options.unreadyAfterMs) return;
    if (this.nc.isClosed()) return;
    this.probing = true;
    this.probeStartedAt = Date.now();
    this.nc.rtt().then(
      () => {
        this.lastHeardAt = Date.now();
        this.probing = false;
      },
      () => {
        this.probing = false;
      },
    );
  }
}
