import { Database } from '@switchboard/postgres';
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
  private readonly db: Database;
  private readonly box: SecretBox;
  private readonly disableAfterMs: number;

  private constructor(options: WebhookStoreOptions) {
    this.box = options.secretBox;
    this.disableAfterMs = options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
    this.db = new Database({
      url: options.connectionString,
      name: 'webhook store',
      applicationName: 'switchboard-webhooks',
      migrate,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    });
  }

  /**
   * Opens the store, creating or upgrading its tables first. A database that cannot be reached
   * yet does not fail the start: each later call tries again (and fails until it can).
   */
  static async open(options: WebhookStoreOptions): Promise<WebhookStore> {
    const store = new WebhookStore(options);
    await store.db.open();
    return store;
  }

  /** Whether the last call or probe reached the database. */
  healthy(): boolean {
    return this.db.healthy;
  }

  createEndpoint(
    keyId: string,
    input: EndpointInput,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string } | 'limit'> {
    return this.db.transaction((client) => createEndpoint(client, this.box, keyId, input));
  }

  listEndpoints(keyId: string): Promise<WebhookEndpoint[]> {
    return this.db.transaction((client) => listEndpoints(client, keyId));
  }

  getEndpoint(keyId: string, id: string): Promise<WebhookEndpoint | null> {
    return this.db.transaction((client) => getEndpoint(client, keyId, id));
  }

  updateEndpoint(keyId: string, id: string, patch: EndpointPatch): Promise<WebhookEndpoint | null> {
    return this.db.transaction((client) => updateEndpoint(client, keyId, id, patch));
  }

  deleteEndpoint(keyId: string, id: string): Promise<boolean> {
    return this.db.transaction((client) => deleteEndpoint(client, keyId, id));
  }

  rotateSecret(
    keyId: string,
    id: string,
    graceSeconds: number,
  ): Promise<{ id: string; secret: string } | null> {
    return this.db.transaction((client) => rotateSecret(client, this.box, keyId, id, graceSeconds));
  }

  enqueueEvent(event: StoredEvent): Promise<number> {
    return this.db.transaction((client) => enqueueEvent(client, event));
  }

  enqueueTest(keyId: string, endpointId: string): Promise<string | null> {
    return this.db.transaction((client) => enqueueTest(client, keyId, endpointId));
  }

  listDeliveries(keyId: string, endpointId: string, query: DeliveryQuery = {}): Promise<DeliveryPage | null> {
    return this.db.transaction((client) => listDeliveries(client, keyId, endpointId, query));
  }

  redeliver(keyId: string, endpointId: string, deliveryId: string): Promise<boolean> {
    return this.db.transaction((client) => redeliver(client, keyId, endpointId, deliveryId));
  }

  claimDue(owner: string, options: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.db.transaction((client) => claimDue(client, this.box, owner, options));
  }

  recordAttempt(owner: string, deliveryId: string, outcome: AttemptOutcome): Promise<AttemptResult> {
    return this.db.transaction((client) =>
      recordAttempt(client, owner, deliveryId, outcome, this.disableAfterMs),
    );
  }

  /**
   * Gives back a stopping sender's leases, so another replica takes its unfinished deliveries at
   * once instead of when the leases run out; an attempt still under way may then be made twice,
   * which receivers de-duplicate by `webhook-id`.
   */
  async releaseLeases(owner: string): Promise<number> {
    const { rowCount } = await this.db.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, updated_at = now()
       WHERE lease_owner = $1 AND status = 'pending'`,
      [owner],
    );
    return rowCount ?? 0;
  }

  async pendingCount(): Promise<number> {
    const rows = await this.db.transaction(async (client) => {
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
    const batches = [
      `DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events WHERE created_at < $1 LIMIT $2)`,
      `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < $1 LIMIT $2)`,
    ];
    for (const sql of batches) {
      for (;;) {
        const { rowCount } = await this.db.query(sql, [olderThan, PRUNE_BATCH]);
        if (!rowCount || rowCount < PRUNE_BATCH || this.db.isClosed) break;
      }
    }
    await this.db.query(
      `DELETE FROM webhook_secrets WHERE expires_at < now() - interval '${EXPIRED_SECRET_KEEP}'`,
    );
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
