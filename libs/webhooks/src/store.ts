import pg from 'pg';
import type { Logger } from '@switchboard/telemetry';
import { claimDue, recordAttempt } from './claims.js';
import { enqueueEvent, enqueueTest, listDeliveries, redeliver } from './deliveries.js';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from './endpoints.js';
import { migrate } from './schema.js';
import type { SecretBox } from './secrets.js';
import type {
  AttemptOutcome,
  AttemptResult,
  ClaimedDelivery,
  ClaimOptions,
  DeliveryPage,
  DeliveryQuery,
  EndpointInput,
  EndpointPatch,
  StoredEvent,
  WebhookEndpoint,
  WebhookStoreOptions,
} from './types.js';

const PROBE_INTERVAL_MS = 5_000;
const PRUNE_BATCH = 5_000;
const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/** Rotated-out secrets are kept a day past their end, then deleted. */
const EXPIRED_SECRET_KEEP = '1 day';

/**
 * Webhook endpoints, their sealed secrets, events and the delivery log in PostgreSQL. The gateway
 * uses the endpoint and log calls (always scoped by the calling key); the sender claims due
 * deliveries under a lease and records each attempt.
 */
export class WebhookStore {
  private readonly pool: pg.Pool;
  private readonly box: SecretBox;
  private readonly logger: Logger | undefined;
  private readonly disableAfterMs: number;
  private lastProbeOk = false;
  /** When the outcome behind lastProbeOk began: an older attempt's answer never overrides it. */
  private outcomeStartedAt = 0;
  private migrated: Promise<void> | null = null;
  private readonly probeTimer: NodeJS.Timeout;
  private closed = false;

  private constructor(options: WebhookStoreOptions) {
    this.box = options.secretBox;
    this.logger = options.logger;
    this.disableAfterMs = options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 15_000,
      application_name: 'switchboard-webhooks',
    });
    // An idle connection the server dropped (a restart) must not take the process down.
    this.pool.on('error', (error) => this.logger?.warn({ err: error }, 'webhook store connection lost'));
    this.probeTimer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  /**
   * Opens the store, creating or upgrading its tables first. A database that cannot be reached
   * yet does not fail the start: each later call tries again (and fails until it can).
   */
  static async open(options: WebhookStoreOptions): Promise<WebhookStore> {
    const store = new WebhookStore(options);
    const startedAt = performance.now();
    try {
      await store.schema();
      store.outcome(true, startedAt);
    } catch (error) {
      store.logger?.warn({ err: error }, 'webhook store not ready; its calls fail until it is');
    }
    return store;
  }

  /** Whether the last call or probe reached the database. */
  healthy(): boolean {
    return this.lastProbeOk;
  }

  createEndpoint(
    keyId: string,
    input: EndpointInput,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string } | 'limit'> {
    return this.transaction((client) => createEndpoint(client, this.box, keyId, input));
  }

  listEndpoints(keyId: string): Promise<WebhookEndpoint[]> {
    return this.transaction((client) => listEndpoints(client, keyId));
  }

  getEndpoint(keyId: string, id: string): Promise<WebhookEndpoint | null> {
    return this.transaction((client) => getEndpoint(client, keyId, id));
  }

  updateEndpoint(keyId: string, id: string, patch: EndpointPatch): Promise<WebhookEndpoint | null> {
    return this.transaction((client) => updateEndpoint(client, keyId, id, patch));
  }

  deleteEndpoint(keyId: string, id: string): Promise<boolean> {
    return this.transaction((client) => deleteEndpoint(client, keyId, id));
  }

  rotateSecret(
    keyId: string,
    id: string,
    graceSeconds: number,
  ): Promise<{ id: string; secret: string } | null> {
    return this.transaction((client) => rotateSecret(client, this.box, keyId, id, graceSeconds));
  }

  enqueueEvent(event: StoredEvent): Promise<number> {
    return this.transaction((client) => enqueueEvent(client, event));
  }

  enqueueTest(keyId: string, endpointId: string): Promise<string | null> {
    return this.transaction((client) => enqueueTest(client, keyId, endpointId));
  }

  listDeliveries(keyId: string, endpointId: string, query: DeliveryQuery = {}): Promise<DeliveryPage | null> {
    return this.transaction((client) => listDeliveries(client, keyId, endpointId, query));
  }

  redeliver(keyId: string, endpointId: string, deliveryId: string): Promise<boolean> {
    return this.transaction((client) => redeliver(client, keyId, endpointId, deliveryId));
  }

  claimDue(owner: string, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.transaction((client) => claimDue(client, this.box, owner, options));
  }

  recordAttempt(owner: string, deliveryId: string, outcome: AttemptOutcome): Promise<AttemptResult> {
    return this.transaction((client) =>
      recordAttempt(client, owner, deliveryId, outcome, this.disableAfterMs),
    );
  }

  /**
   * Gives back a stopping sender's leases, so another replica takes its unfinished deliveries at
   * once instead of when the leases run out; an attempt still under way may then be made twice,
   * which receivers de-duplicate by `webhook-id`.
   */
  async releaseLeases(owner: string): Promise<number> {
    const { rowCount } = await this.pool.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, updated_at = now()
       WHERE lease_owner = $1 AND status = 'pending'`,
      [owner],
    );
    return rowCount ?? 0;
  }

  async pendingCount(): Promise<number> {
    const rows = await this.transaction(async (client) => {
      const result = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
      );
      return result.rows;
    });
    return rows[0]?.n ?? 0;
  }

  /**
   * Deletes events, deliveries and attempts made before `olderThan` (a batch at a time, so no
   * statement holds locks for long), and secrets long rotated out. Any replica may run it.
   */
  async prune(olderThan: Date): Promise<void> {
    await this.schema();
    const batches = [
      `DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE created_at < $1 LIMIT $2)`,
      `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < $1 LIMIT $2)`,
    ];
    for (const sql of batches) {
      for (;;) {
        const { rowCount } = await this.pool.query(sql, [olderThan, PRUNE_BATCH]);
        if (!rowCount || rowCount < PRUNE_BATCH || this.closed) break;
      }
    }
    await this.pool.query(
      `DELETE FROM webhook_secrets WHERE expires_at < now() - interval '${EXPIRED_SECRET_KEEP}'`,
    );
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
    this.lastProbeOk = ok;
  }

  private schema(): Promise<void> {
    this.migrated ??= this.withClient((client) => migrate(client)).catch((error: unknown) => {
      this.migrated = null;
      throw error;
    });
    return this.migrated;
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

  private async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client's connection can drop (a server restart): without a listener that
    // 'error' would be uncaught and take the process down. The failing query rejects anyway.
    const onError = (error: Error) => this.logger?.warn({ err: error }, 'webhook store connection lost');
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

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
}
