import type { Logger } from '@switchboard/telemetry';
import type { Quotas, UsageRecord } from '@switchboard/usage';

export interface PendingRecord {
  record: UsageRecord;
  quotas: Quotas;
  reservationId?: string;
}

export interface RecordRetryOptions {
  /** Records waiting at most; past it a failed record is dropped (and counted) instead. */
  capacity: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetryOptions: RecordRetryOptions = {
  capacity: 10_000,
  firstDelayMs: 1_000,
  maxDelayMs: 60_000,
};

/**
 * Records whose store write failed (the store went away mid-call), written again in the
 * background with a growing delay until they are stored. The work was answered already; a record
 * id makes a write that did land but whose answer was lost count once all the same. The queue is
 * bounded so an outage cannot grow the gateway's memory without end: what does not fit is logged
 * whole (an operator can replay it) and counted.
 */
export class RecordRetries {
  private readonly pending: PendingRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number;
  private closed = false;

  constructor(
    private readonly write: (pending: PendingRecord) => Promise<void>,
    private readonly logger: Logger,
    private readonly onFailure: (outcome: 'retried' | 'dropped') => void,
    private readonly options: RecordRetryOptions = defaultRetryOptions,
  ) {
    this.delayMs = options.firstDelayMs;
  }

  get size(): number {
    return this.pending.length;
  }

  add(pending: PendingRecord, error: unknown): void {
    if (this.pending.length >= this.options.capacity || this.closed) {
      this.onFailure('dropped');
      this.logger.error(
        { err: error, usage_record: pending.record },
        'usage record dropped: retry queue full',
      );
      return;
    }
    this.onFailure('retried');
    this.logger.warn({ err: error, record_id: pending.record.id }, 'usage record not stored; will retry');
    this.pending.push(pending);
    this.schedule();
  }

  /** Writes what is waiting, oldest first, until one fails: then waits longer before the next round. */
  async flush(): Promise<void> {
    this.timer = undefined;
    while (this.pending.length > 0) {
      const next = this.pending[0]!;
      try {
        await this.write(next);
      } catch (error) {
        this.logger.warn({ err: error, waiting: this.pending.length }, 'usage records still not stored');
        this.delayMs = Math.min(this.delayMs * 2, this.options.maxDelayMs);
        this.schedule();
        return;
      }
      this.pending.shift();
    }
    this.delayMs = this.options.firstDelayMs;
  }

  /** Stops retrying; what still waits is logged whole so it is never lost silently. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const pending of this.pending.splice(0)) {
      this.logger.error({ usage_record: pending.record }, 'usage record not stored before shutdown');
    }
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), this.delayMs);
    this.timer.unref();
  }
}
