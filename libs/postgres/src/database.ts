import pg from 'pg';
import type { Logger } from '@switchboard/telemetry';

export type Queryable = Pick<pg.PoolClient, 'query'>;

export interface DatabaseOptions {
  /** postgresql:// URL, credentials included. */
  url: string;
  /** What the store is called in log lines (`usage store`, `webhook store`). */
  name: string;
  /** The server's `application_name` for these connections (pg_stat_activity). */
  applicationName: string;
  /** Creates or upgrades the store's tables; idempotent, and safe to run from every replica at once. */
  migrate(client: pg.PoolClient): Promise<void>;
  logger?: Logger;
  /** Connections per process. */
  poolSize?: number;
}

const PROBE_INTERVAL_MS = 5_000;

/**
 * A pool whose schema is made before the first call (and again by the next call when that
 * failed), with `healthy` telling whether the latest call or probe reached the server. A database
 * that cannot be reached does not fail a process's start: calls fail until it can.
 */
export class Database {
  private readonly pool: pg.Pool;
  private readonly options: DatabaseOptions;
  private lastOk = false;
  /** When the outcome behind lastOk began: an older attempt's answer never overrides it. */
  private outcomeStartedAt = 0;
  private migrated: Promise<void> | null = null;
  private readonly probeTimer: NodeJS.Timeout;
  private closed = false;

  constructor(options: DatabaseOptions) {
    this.options = options;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 15_000,
      application_name: options.applicationName,
    });
    // An idle connection the server dropped (a restart) must not take the process down.
    this.pool.on('error', (error) => this.connectionLost(error));
    this.probeTimer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  /** Whether the latest call or probe reached the database. */
  get healthy(): boolean {
    return this.lastOk;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Makes the schema now; a failure is logged, not thrown (the next call tries again). */
  async open(): Promise<void> {
    const startedAt = performance.now();
    try {
      await this.schema();
      this.outcome(true, startedAt);
    } catch (error) {
      this.options.logger?.warn({ err: error }, `${this.options.name} not ready; its calls fail until it is`);
    }
  }

  /** The schema, made once per process (a failed attempt is retried by the next caller). */
  schema(): Promise<void> {
    this.migrated ??= this.withClient((client) => this.options.migrate(client)).catch((error: unknown) => {
      this.migrated = null;
      throw error;
    });
    return this.migrated;
  }

  /** One statement on any pooled connection, after the schema. */
  async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    await this.schema();
    return this.pool.query<R>(text, values);
  }

  /** `work` on one connection of the pool (no transaction), after the schema. */
  async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client's connection can drop (a server restart): without a listener that
    // 'error' would be uncaught and take the process down. The failing query rejects anyway.
    const onError = (error: Error) => this.connectionLost(error);
    client.on('error', onError);
    let failure: Error | undefined;
    try {
      return await work(client);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.off('error', onError);
      // A client that failed is discarded rather than handed to the next caller half-broken.
      client.release(failure);
    }
  }

  /** `work` in one transaction, after the schema; its outcome is the database's health. */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    try {
      await this.schema();
      const result = await this.withClient(async (client) => {
        await client.query('BEGIN');
        try {
          const value = await work(client);
          await client.query('COMMIT');
          return value;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      });
      this.outcome(true, startedAt);
      return result;
    } catch (error) {
      this.outcome(false, startedAt);
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probeTimer);
    await this.pool.end();
  }

  /** Notes how an attempt begun at `startedAt` ended, unless a later-begun one already told. */
  private outcome(ok: boolean, startedAt: number): void {
    if (startedAt < this.outcomeStartedAt) return;
    this.outcomeStartedAt = startedAt;
    this.lastOk = ok;
  }

  private async probe(): Promise<void> {
    const startedAt = performance.now();
    try {
      await this.schema();
      await this.pool.query('SELECT 1');
      this.outcome(true, startedAt);
    } catch {
      this.outcome(false, startedAt);
    }
  }

  private connectionLost(error: Error): void {
    this.options.logger?.warn({ err: error }, `${this.options.name} connection lost`);
  }
}
