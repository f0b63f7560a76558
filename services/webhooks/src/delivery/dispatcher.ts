// The claim loop: takes due deliveries from PostgreSQL under a lease and runs their attempts, at
// most `concurrency` at once here and `perEndpoint` per endpoint across every sender (the store
// counts live leases), so a slow or dead endpoint holds a few slots and never the rest. Replicas
// share the table without double delivery: claims take turns under one advisory lock, and each
// claimed delivery is leased to its sender.
import type { Logger } from '@switchboard/telemetry';
import type { ClaimedDelivery, ClaimOptions, WebhookStore } from '@switchboard/webhooks';

/** What the dispatcher needs of the store; `releaseLeases` gives unstarted work back at shutdown. */
export interface DispatchStore {
  claimDue: WebhookStore['claimDue'];
  releaseLeases(owner: string): Promise<unknown>;
}

export interface DispatcherOptions {
  store: DispatchStore;
  owner: string;
  /** Attempts in flight here. */
  concurrency: number;
  /** Attempts in flight per endpoint, cluster-wide. */
  perEndpoint: number;
  /** Attempts in flight per key, cluster-wide. */
  perKey: number;
  /** How long a claim is this sender's; longer than an attempt can take. */
  leaseMs: number;
  /** Between claims when nothing finished meanwhile. */
  pollMs?: number;
  /** One attempt, recorded; must not throw. */
  deliver: (delivery: ClaimedDelivery) => Promise<void>;
  logger: Logger;
}

const DEFAULT_POLL_MS = 200;
/** After a failed claim (the store is down): wait longer, so the logs are not flooded. */
const FAILED_CLAIM_BACKOFF_MS = 2_000;

export class Dispatcher {
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly o: DispatcherOptions) {}

  /** Attempts under way now. */
  get busy(): number {
    return this.inFlight.size;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops claiming, lets attempts under way finish for up to `graceMs`, then gives back the
   * leases of whatever is left (those deliveries are someone else's at once, not after the lease).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(this.inFlight), grace]);
    clearTimeout(timer);
    if (this.inFlight.size > 0) {
      this.o.logger.warn({ in_flight: this.inFlight.size }, 'attempts still under way at shutdown');
    }
    try {
      await this.o.store.releaseLeases(this.o.owner);
    } catch (error) {
      this.o.logger.warn({ err: error }, 'leases not released; they expire by themselves');
    }
  }

  private async run(): Promise<void> {
    const options: Omit<ClaimOptions, 'limit'> = {
      perEndpoint: this.o.perEndpoint,
      perKey: this.o.perKey,
      leaseMs: this.o.leaseMs,
    };
    while (!this.stopping) {
      const free = this.o.concurrency - this.inFlight.size;
      let waitMs = this.o.pollMs ?? DEFAULT_POLL_MS;
      if (free > 0) {
        try {
          const claimed = await this.o.store.claimDue(this.o.owner, { ...options, limit: free });
          for (const delivery of claimed) this.launch(delivery);
          // A full claim: more may be due, so claim again as soon as a slot is free.
          if (claimed.length === free) continue;
        } catch (error) {
          this.o.logger.warn({ err: error }, 'claiming deliveries failed');
          waitMs = FAILED_CLAIM_BACKOFF_MS;
        }
      }
      await this.pause(waitMs);
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const attempt = this.o
      .deliver(delivery)
      .catch((error: unknown) =>
        this.o.logger.error({ err: error, delivery_id: delivery.id }, 'attempt failed'),
      )
      .finally(() => {
        this.inFlight.delete(attempt);
        // A finished attempt frees a slot (and maybe an endpoint's share): claim again now.
        this.wake?.();
      });
    this.inFlight.add(attempt);
  }

  /** Waits `ms`, or less when an attempt ends or stop() is called. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
