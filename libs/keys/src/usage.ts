import type { KV, KvEntry } from 'nats';
import type { Logger } from '@switchboard/telemetry';

/**
 * Last-used times without a write per request. touch() only notes the time in memory; flush()
 * (every ~30 s and on close) writes one value per key used since the previous flush to a
 * separate bucket, so the key records — and every replica's watch of them — stay quiet.
 * Replicas write the same key with plain put: a write can only lose to one from another replica
 * within the same flush window, i.e. the time is off by at most one interval.
 */
export class UsageTracker {
  /** Key id → ms of last use, seen by this replica since the last flush. */
  private pending = new Map<string, number>();
  /** Key id → ms, as stored (from the watch of the usage bucket, and our own writes). */
  private readonly stored = new Map<string, number>();

  constructor(
    private readonly kv: KV,
    private readonly logger: Logger | undefined,
  ) {}

  touch(id: string, at = Date.now()): void {
    this.pending.set(id, at);
  }

  onEntry(entry: KvEntry): void {
    if (entry.operation !== 'PUT') {
      this.stored.delete(entry.key);
      return;
    }
    const at = Date.parse(entry.string());
    if (Number.isFinite(at) && at > (this.stored.get(entry.key) ?? 0)) this.stored.set(entry.key, at);
  }

  lastUsedAt(id: string): string | null {
    const at = Math.max(this.stored.get(id) ?? 0, this.pending.get(id) ?? 0);
    return at > 0 ? new Date(at).toISOString() : null;
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    await Promise.all(
      [...batch].map(async ([id, at]) => {
        if (at <= (this.stored.get(id) ?? 0)) return; // another replica already wrote a later time
        try {
          await this.kv.put(id, new Date(at).toISOString());
          this.stored.set(id, Math.max(at, this.stored.get(id) ?? 0));
        } catch (error) {
          // Keep it for the next flush unless something newer arrived meanwhile.
          if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at);
          this.logger?.warn({ err: error, key_id: id }, 'last-used flush failed');
        }
      }),
    );
  }
}
