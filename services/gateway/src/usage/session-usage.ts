import type { BrowserFleet, SessionRecord } from '@switchboard/browser-registry';
import type { Logger } from '@switchboard/telemetry';
import type { Metering } from './metering.js';
import { sessionSeconds } from './meter-values.js';

/** A session whose worker has been silent this long is over: its browser went with the worker. */
export const WORKER_GONE_AFTER_MS = 60_000;
const SWEEP_INTERVAL_MS = 10_000;

/** The record id of a session's usage: the same on every replica, so it is stored once. */
export const sessionRecordId = (sessionId: string) => `session:${sessionId}`;

/**
 * Records each browser session's seconds, creation to close or expiry, from the session registry:
 * every replica records every ended session it sees (the store keeps the first record of an id),
 * so a session is counted whether or not any request was running when it expired, and a replica
 * that was down catches up from the records the registry still holds. A session whose worker died
 * never gets an ended record; it is recorded once its worker has been silent WORKER_GONE_AFTER_MS.
 */
export class SessionUsage {
  private readonly seen = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly metering: Metering,
    private readonly logger: Logger,
  ) {}

  /** FleetOptions.onSessionEnded. */
  readonly ended = (record: SessionRecord): void => {
    this.recordOnce(record, record.updated_at_ms);
  };

  /** Starts looking for sessions whose worker died under them. */
  watchForLostWorkers(fleet: BrowserFleet): void {
    this.timer = setInterval(() => {
      const now = Date.now();
      for (const record of fleet.allSessions()) {
        if (record.session.status !== 'active') continue;
        // isAlive at an earlier instant: silent for WORKER_GONE_AFTER_MS beyond the usual staleness.
        if (!fleet.isAlive(record.worker_id, now - WORKER_GONE_AFTER_MS)) this.recordOnce(record, now);
      }
    }, SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private recordOnce(record: SessionRecord, endedAtMs: number): void {
    const { session_id, owner_key_id, created_at } = record.session;
    // Each replica writes a session once; the store makes it once across replicas and restarts.
    if (this.seen.has(session_id)) return;
    this.seen.add(session_id);
    if (this.seen.size > 100_000) this.seen.delete(this.seen.values().next().value!);
    void this.metering
      .recordForKeyId({
        id: sessionRecordId(session_id),
        key_id: owner_key_id,
        capability: 'browser',
        model: null,
        at: new Date(endedAtMs),
        values: { session_seconds: sessionSeconds(created_at, endedAtMs) },
      })
      .catch((error: unknown) => this.logger.error({ err: error, session_id }, 'session usage not recorded'));
  }
}
