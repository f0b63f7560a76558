import { retryCreationRace } from '@switchboard/events';
import type { KV, KvEntry, NatsConnection } from 'nats';
import { watchBucket, type BucketWatch } from '@switchboard/keys';
import type { Logger } from '@switchboard/telemetry';
import {
  CAPACITY_REFUSAL_WINDOW_MS,
  CAPACITY_REFUSALS_BUCKET,
  decodeRefusal,
  decodeSession,
  decodeWorker,
  encodeRecord,
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
  /**
   * Called with each session record that is closed or expired, as the watch delivers it: the
   * bucket's current records first (so a replica that starts late still sees the sessions that
   * ended within the records' max age), then every change. One session's ended record may come
   * more than once (rewrites, remember(), every replica): what it starts must be idempotent.
   */
  onSessionEnded?: (record: SessionRecord) => void;
}

export const DEFAULT_STALE_AFTER_MS = 6_000;

/** The cluster's browsers as the registry shows them: what the capacity share is measured on. */
export interface FleetUsage {
  /** Sessions the live workers can run at once (the sum of their `max_sessions`). */
  capacity: number;
  /** Sessions running on live workers (per worker, its heartbeat or the registry, whichever is more). */
  inUse: number;
  /** Active sessions per owner key id, cluster-wide. */
  sessionsByKey: Map<string, number>;
}

/** NATS KV keys allow only these; key ids (`[a-z2-7]{12}`) always match. */
const KV_KEY = /^[-/_=.a-zA-Z0-9]+$/;

/**
 * The gateway's side of the registry: a local, watched view of every browser worker and session,
 * so routing a call costs no round trip. A record another replica created a moment ago may not
 * have arrived yet, so a miss is confirmed against the bucket before it becomes a 404.
 */
export class BrowserFleet {
  private readonly workerRecords = new Map<string, WorkerRecord>();
  /**
   * gRPC address → the worker that announced itself from it last. One address is one process: a
   * worker restarted on its predecessor's address replaces it, and the predecessor's record (and
   * with it its sessions) is gone from then on, not only once its heartbeat goes stale.
   */
  private readonly addressHolders = new Map<string, string>();
  private readonly sessionRecords = new Map<string, SessionRecord>();
  /** Key id → unix ms of its latest `no_capacity` refusal (any replica's), within the window. */
  private readonly refusals = new Map<string, number>();
  private readonly watches: BucketWatch[] = [];
  private lastSweep = 0;

  private constructor(
    private readonly sessionsKv: KV,
    private readonly refusalsKv: KV,
    private readonly staleAfterMs: number,
    private readonly logger: Logger,
    private readonly onSessionEnded: ((record: SessionRecord) => void) | undefined,
  ) {}

  static async open(nc: NatsConnection, options: FleetOptions): Promise<BrowserFleet> {
    // Gateway replicas starting together create the same buckets.
    return retryCreationRace(() => BrowserFleet.openOnce(nc, options));
  }

  private static async openOnce(nc: NatsConnection, options: FleetOptions): Promise<BrowserFleet> {
    const js = nc.jetstream();
    // Same options as the workers' side: whichever opens a bucket first creates it.
    const workersKv = await js.views.kv(WORKERS_BUCKET, { history: 1, ttl: WORKER_RECORD_MAX_AGE_MS });
    const sessionsKv = await js.views.kv(SESSIONS_BUCKET, { history: 1, ttl: SESSION_RECORD_MAX_AGE_MS });
    const refusalsKv = await js.views.kv(CAPACITY_REFUSALS_BUCKET, {
      history: 1,
      ttl: CAPACITY_REFUSAL_WINDOW_MS,
    });
    const fleet = new BrowserFleet(
      sessionsKv,
      refusalsKv,
      options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS,
      options.logger,
      options.onSessionEnded,
    );
    fleet.watches.push(
      await watchBucket(workersKv, (e) => fleet.onWorker(e), options.logger, WORKERS_BUCKET),
      await watchBucket(sessionsKv, (e) => fleet.onSession(e), options.logger, SESSIONS_BUCKET),
      await watchBucket(refusalsKv, (e) => fleet.onRefusal(e), options.logger, CAPACITY_REFUSALS_BUCKET),
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
    return this.mostFree(this.liveWorkers(now));
  }

  /**
   * When no worker is live: the one with the most free sessions among those whose heartbeat is
   * late but that neither withdrew nor were found unreachable. A worker starved of CPU for a few
   * seconds is late, not gone; placing on it costs one refused connection if it is gone.
   */
  pickLateWorker(now = Date.now()): WorkerRecord | undefined {
    return this.mostFree(
      [...this.workerRecords.values()].filter((w) => now - w.updated_at_ms > this.staleAfterMs),
    );
  }

  private mostFree(candidates: WorkerRecord[]): WorkerRecord | undefined {
    const active = new Map<string, number>();
    for (const record of this.sessionRecords.values()) {
      if (record.session.status === 'active') {
        active.set(record.worker_id, (active.get(record.worker_id) ?? 0) + 1);
      }
    }
    let best: WorkerRecord | undefined;
    let bestFree = 0;
    for (const worker of candidates) {
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
   * The cluster's capacity, the sessions in use and each key's share of them. Counted per live
   * worker like pickWorker counts, so "full" here is exactly when placement finds no worker.
   */
  usage(now = Date.now()): FleetUsage {
    const live = new Map(this.liveWorkers(now).map((w) => [w.worker_id, w]));
    const onWorker = new Map<string, number>();
    const sessionsByKey = new Map<string, number>();
    for (const record of this.sessionRecords.values()) {
      if (record.session.status !== 'active' || !live.has(record.worker_id)) continue;
      onWorker.set(record.worker_id, (onWorker.get(record.worker_id) ?? 0) + 1);
      const owner = record.session.owner_key_id;
      sessionsByKey.set(owner, (sessionsByKey.get(owner) ?? 0) + 1);
    }
    let capacity = 0;
    let inUse = 0;
    for (const worker of live.values()) {
      capacity += worker.max_sessions;
      inUse += Math.min(
        worker.max_sessions,
        Math.max(worker.active_sessions, onWorker.get(worker.worker_id) ?? 0),
      );
    }
    return { capacity, inUse, sessionsByKey };
  }

  /**
   * Records that `keyId` was turned away for lack of capacity, for every replica. Awaited before
   * the refusal is answered, so a replica asked next already sees it; a registry that does not
   * answer costs the record (logged), never the answer.
   */
  async recordRefusal(keyId: string, now = Date.now()): Promise<void> {
    if (!KV_KEY.test(keyId)) return;
    this.refusals.set(keyId, now);
    try {
      await this.refusalsKv.put(keyId, encodeRecord({ key_id: keyId, refused_at_ms: now }));
    } catch (error) {
      this.logger.warn({ err: error }, 'capacity refusal not recorded');
    }
  }

  /** The key got a session: it is no longer waiting. Only keys with a record cost a write. */
  clearRefusal(keyId: string): void {
    if (!this.refusals.delete(keyId)) return;
    this.refusalsKv.delete(keyId).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'capacity refusal not cleared');
    });
  }

  /** Keys refused for lack of capacity within CAPACITY_REFUSAL_WINDOW_MS and not served since. */
  waitingKeys(now = Date.now()): string[] {
    const waiting: string[] = [];
    for (const [keyId, at] of this.refusals) {
      if (now - at <= CAPACITY_REFUSAL_WINDOW_MS) waiting.push(keyId);
      // The bucket drops it too, without telling watchers.
      else this.refusals.delete(keyId);
    }
    return waiting;
  }

  /**
   * The worker that holds `address` now (the one that announced itself from it last), if any
   * announced from it: a session record naming another worker there names one that is gone.
   */
  workerAt(address: string): string | undefined {
    return this.addressHolders.get(address);
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
      for (const [address, holder] of this.addressHolders) {
        if (holder === entry.key) this.addressHolders.delete(address);
      }
      this.workerRecords.delete(entry.key);
      return;
    }
    const record = decodeWorker(entry.value);
    // The key is the worker id; a record naming another is not trusted.
    if (!record || record.worker_id !== entry.key) return;
    const predecessor = this.addressHolders.get(record.grpc_address);
    if (predecessor !== undefined && predecessor !== entry.key) this.workerRecords.delete(predecessor);
    this.addressHolders.set(record.grpc_address, entry.key);
    this.workerRecords.set(entry.key, record);
  }

  private onRefusal(entry: KvEntry): void {
    if (entry.operation !== 'PUT') {
      this.refusals.delete(entry.key);
      return;
    }
    const record = decodeRefusal(entry.value);
    // The key is the key id; a record naming another is not trusted.
    if (record && record.key_id === entry.key) {
      this.refusals.set(entry.key, Math.max(record.refused_at_ms, this.refusals.get(entry.key) ?? 0));
    }
  }

  private onSession(entry: KvEntry): void {
    if (entry.operation !== 'PUT') {
      this.sessionRecords.delete(entry.key);
      return;
    }
    const record = decodeSession(entry.value);
    if (!record) return;
    this.keepNewer(record);
    if (record.session.status !== 'active') this.onSessionEnded?.(record);
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
