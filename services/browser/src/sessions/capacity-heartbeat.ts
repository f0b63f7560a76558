// The worker's entry in the browser registry: gateways place new sessions by the free capacity it
// carries and drop a worker whose entry goes stale, so it is written on every capacity change and
// at least every HEARTBEAT_INTERVAL_MS.
import type { Capacity } from '@switchboard/browser-registry';
import type { CapacityResponse } from '@switchboard/contracts';
import type { Logger } from '@switchboard/telemetry';
import type { BrowserMetrics } from '../metrics.js';

const HEARTBEAT_INTERVAL_MS = 2_000;

export interface CapacityHeartbeatOptions {
  capacity: () => CapacityResponse;
  registry: { announce(capacity: Capacity): Promise<void>; withdraw(): Promise<void> };
  maxSessions: number;
  metrics: Pick<BrowserMetrics, 'sessionCapacity' | 'activeSessions' | 'poolSize'>;
  logger: Logger;
}

export class CapacityHeartbeat {
  /** Gateways learn of this worker only once it serves; until then only the gauges follow. */
  private announced = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: CapacityHeartbeatOptions) {}

  /** Capacity changed: the gauges now, the registry entry too once announced. */
  beat(): void {
    this.write().catch((error: unknown) => this.o.logger.warn({ err: error }, 'heartbeat not written'));
  }

  /** Writes the first entry (awaited: the worker serves once gateways can find it), then beats. */
  async announce(): Promise<void> {
    this.announced = true;
    await this.write();
    this.timer ??= setInterval(() => this.beat(), HEARTBEAT_INTERVAL_MS);
  }

  /** Leaving on purpose: gateways stop placing sessions here at once, not after staleness. */
  async withdraw(): Promise<void> {
    clearInterval(this.timer);
    this.announced = false;
    await this.o.registry.withdraw().catch(() => undefined);
  }

  private async write(): Promise<void> {
    const capacity = this.o.capacity();
    this.o.metrics.sessionCapacity.set(capacity.max_sessions ?? this.o.maxSessions);
    this.o.metrics.activeSessions.set(capacity.active_sessions ?? 0);
    this.o.metrics.poolSize.set(capacity.warm_browsers ?? 0);
    if (!this.announced) return;
    await this.o.registry.announce({
      maxSessions: this.o.maxSessions,
      activeSessions: capacity.active_sessions ?? 0,
      warmBrowsers: capacity.warm_browsers ?? 0,
    });
  }
}
