import type { KV, KvEntry, NatsConnection } from 'nats';
import { watchBucket, type BucketWatch } from '@switchboard/keys';
import type { Logger } from '@switchboard/telemetry';
import {
  decodeSession,
  decodeWorker,
  SESSION_RECORD_MAX_AGE_MS,
  SESSIONS_BUCKET,
  WORKER_RECORD_MAX_AGE_MS,
  WORKERS_BUCKET,
  type SessionRecord,
  type WorkerRecord,
} from './records.js';

export interface FleetOptions {
  logger: Logger;
  /** A worker whose heartbeat is older than this is treated as gone (default 6 s: 3 heartbeats). */
  staleAfterMs?: number;
}

export const DEFAULT_STALE_AFTER_MS = 6_000;

/**
 * The gateway's side of the registry: a local, watched view of every browser worker and session,
 * so routing a call costs no round trip. A record another replica created a moment ago may not
 * have arrived yet, so a miss is confirmed against the bucket before it becomes a 404.
 */
export class BrowserFleet {
  private readonly workerRecords = new Map<string, WorkerRecord>();
  private readonly sessionRecords = new Map<string, SessionRecord>();
  private readonly watches: BucketWatch[] = [];
  private lastSweep = 0;

  private constructor(
    private readonly sessionsKv: KV,
    private readonly staleAfterMs: number,
  ) {}

  static async open(nc: NatsConnection, options: FleetOptions): Promise<BrowserFleet> {
    const js = nc.jetstream();
    // Same options as the workers' side: whichever opens a bucket first creates it.
    const workersKv = await js.views.kv(WORKERS_BUCKET, { history: 1, ttl: WORKER_RECORD_MAX_AGE_MS });
    const sessionsKv = await js.views.kv(SESSIONS_BUCKET, { history: 1, ttl: SESSION_RECORD_MAX_AGE_MS });
    const fleet = new BrowserFleet(sessionsKv, options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
    fleet.watches.push(
      await watchBucket(workersKv, (e) => fleet.onWorker(e), options.logger, WORKERS_BUCKET),
      await watchBucket(sessionsKv, (e) => fleet.onSession(e), options.logger, SESSIONS_BUCKET),
    );
    await Promise.all(fleet.watches.map((w) => w.ready));
    return fleet;
  }

  get isWatching(): boolean {
    return this.watches.every((w) => w.active);
  }

  /** The session's record: from the view, else from the bucket itself; null when there is none. */
  async session(id: string): Promise<SessionRecord | null> {
    const known = this.sessionRecords.get(id);
    if (known) return known;
    const entry = await this.sessionsKv.get(id);
    if (!entry || entry.operation !== 'PUT') return null;
    const record = decodeSession(entry.value);
    if (record) this.keepNewer(record);
    return record;
  }

  /** Makes a record this replica just received visible before the watch delivers it. */
  remember(record: SessionRecord): void {
    this.keepNewer(record);
  }

  isAlive(workerId: string, now = Date.now()): boolean {
    const worker = this.workerRecords.get(workerId);
    return worker !== undefined && now - worker.updated_at_ms <= this.staleAfterMs;
  }

  /**
   * A session whose worker is gone cannot be active, whatever its last record said: its browser
   * died with the worker, so it is reported `expired`.
   */
  effectiveStatus(record: SessionRecord, now = Date.now()): string {
    if (record.session.status === 'active' && !this.isAlive(record.worker_id, now)) return 'expired';
    return record.session.status;
  }

  liveWorkers(now = Date.now()): WorkerRecord[] {
    return [...this.workerRecords.values()].filter((w) => now - w.updated_at_ms <= this.staleAfterMs);
  }

  /**
   * The live worker with the most free sessions, or undefined when none has any. A worker's own
   * count lags its heartbeat, so sessions the registry already lists for it count too.
   */
  pickWorker(now = Date.now()): WorkerRecord | undefined {
    const active = new Map<string, number>();
    for (const record of this.sessionRecords.values()) {
      if (record.session.status === 'active') {
        active.set(record.worker_id, (active.get(record.worker_id) ?? 0) + 1);
      }
    }
    let best: WorkerRecord | undefined;
    let bestFree = 0;
    for (const worker of this.liveWorkers(now)) {
      const used = Math.max(worker.active_sessions, active.get(worker.worker_id) ?? 0);
      const free = worker.max_sessions - used;
      if (free > bestFree) {
        best = worker;
        bestFree = free;
      }
    }
    return best;
  }

  /** Sessions of one key that are active anywhere in the cluster (the tier's limit counts these). */
  activeSessionsOf(keyId: string, now = Date.now()): SessionRecord[] {
    return [...this.sessionRecords.values()].filter(
      (r) => r.session.owner_key_id === keyId && this.effectiveStatus(r, now) === 'active',
    );
  }

  /**
   * Drops a worker this replica found unreachable, so placement skips it at once rather than
   * after its heartbeat goes stale; a live worker's next heartbeat brings it back.
   */
  forgetWorker(workerId: string): void {
    this.workerRecords.delete(workerId);
  }

  /** Every session the registry knows, for the admin dashboard. */
  allSessions(): SessionRecord[] {
    return [...this.sessionRecords.values()];
  }

  close(): void {
    for (const watch of this.watches) watch.stop();
  }

  private onWorker(entry: KvEntry): void {
    if (entry.operation !== 'PUT') {
      this.workerRecords.delete(entry.key);
      return;
    }
    const record = decodeWorker(entry.value);
    if (record) this.workerRecords.set(entry.key, record);
  }

  private onSession(entry: KvEntry): void {
    if (entry.operation !== 'PUT') {
      this.sessionRecords.delete(entry.key);
      return;
    }
    const record = decodeSession(entry.value);
    if (record) this.keepNewer(record);
  }

  /** Records can arrive twice (remember() and the watch); the later write wins. */
  private keepNewer(record: SessionRecord): void {
    const known = this.sessionRecords.get(record.session.session_id);
    if (!known || known.updated_at_ms <= record.updated_at_ms) {
      this.sessionRecords.set(record.session.session_id, record);
    }
    this.forgetExpiredRecords();
  }

  /**
   * The bucket drops records after their max age without telling watchers, so the view drops
   * them by the same rule; checked on writes, which is often enough to bound the map.
   */
  private forgetExpiredRecords(now = Date.now()): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, record] of this.sessionRecords) {
      if (now - record.updated_at_ms > SESSION_RECORD_MAX_AGE_MS) this.sessionRecords.delete(id);
    }
  }
}
