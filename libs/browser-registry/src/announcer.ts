import { retryCreationRace } from '@switchboard/events';
import type { KV, NatsConnection } from 'nats';
import type { Logger } from '@switchboard/telemetry';
import {
  encodeRecord,
  SESSION_RECORD_MAX_AGE_MS,
  SESSIONS_BUCKET,
  WORKER_RECORD_MAX_AGE_MS,
  WORKERS_BUCKET,
  type SessionRecord,
  type WorkerRecord,
} from './records.js';

export interface WorkerIdentity {
  workerId: string;
  grpcAddress: string;
  devtoolsAddress: string;
}

export interface Capacity {
  maxSessions: number;
  activeSessions: number;
  warmBrowsers: number;
}

/**
 * The browser worker's side of the registry: it announces itself (a heartbeat carrying its free
 * capacity, which gateways use to place new sessions) and writes every session it owns.
 */
export class RegistryAnnouncer {
  private constructor(
    private readonly workers: KV,
    private readonly sessions: KV,
    private readonly identity: WorkerIdentity,
    private readonly logger: Logger,
  ) {}

  static async open(
    nc: NatsConnection,
    identity: WorkerIdentity,
    logger: Logger,
  ): Promise<RegistryAnnouncer> {
    const js = nc.jetstream();
    // Workers and gateways starting together create the same buckets.
    const [workers, sessions] = await retryCreationRace(async () => [
      await js.views.kv(WORKERS_BUCKET, { history: 1, ttl: WORKER_RECORD_MAX_AGE_MS }),
      await js.views.kv(SESSIONS_BUCKET, { history: 1, ttl: SESSION_RECORD_MAX_AGE_MS }),
    ]);
    return new RegistryAnnouncer(workers, sessions, identity, logger);
  }

  /** Writes this worker's record; awaited at start-up, fire-and-forget for heartbeats. */
  async announce(capacity: Capacity): Promise<void> {
    const record: WorkerRecord = {
      worker_id: this.identity.workerId,
      grpc_address: this.identity.grpcAddress,
      devtools_address: this.identity.devtoolsAddress,
      max_sessions: capacity.maxSessions,
      active_sessions: capacity.activeSessions,
      warm_browsers: capacity.warmBrowsers,
      updated_at_ms: Date.now(),
    };
    await this.workers.put(this.identity.workerId, encodeRecord(record));
  }

  /** Writes a session's current state; the caller awaits it when a gateway must see it next. */
  async putSession(session: SessionRecord['session']): Promise<void> {
    const record: SessionRecord = {
      session,
      worker_id: this.identity.workerId,
      grpc_address: this.identity.grpcAddress,
      devtools_address: this.identity.devtoolsAddress,
      updated_at_ms: Date.now(),
    };
    await this.sessions.put(session.session_id, encodeRecord(record));
  }

  /** Same as putSession, for state changes nobody waits on; a failure is logged, not thrown. */
  publishSession(session: SessionRecord['session']): void {
    this.putSession(session).catch((error: unknown) =>
      this.logger.warn({ err: error, session_id: session.session_id }, 'session record not written'),
    );
  }

  /** Leaving on purpose: gateways stop placing sessions here at once instead of after staleness. */
  async withdraw(): Promise<void> {
    await this.workers.delete(this.identity.workerId);
  }
}
