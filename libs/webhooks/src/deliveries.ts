import { isDeliverable, matchesFilter } from './event-types.js';
import { newDeliveryId, newEventId } from './ids.js';
import { deliveryView, type DeliveryRow, type Queryable } from './rows.js';
import type { DeliveryPage, DeliveryQuery, StoredEvent } from './types.js';

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/** The wire body: Standard Webhooks' {type, timestamp, data}, in that order, written once. */
function payloadOf(event: StoredEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurred_at, data: event.data });
}

/**
 * Stores the event and one pending delivery for each endpoint id, due now. False when the event
 * id is already stored: the deliveries were made with it, in the same transaction.
 */
export async function insertEvent(
  client: Queryable,
  event: StoredEvent,
  endpointIds: readonly string[],
): Promise<number> {
  const { rowCount } = await client.query(
    `INSERT INTO webhook_events (id, key_id, type, occurred_at, payload, traceparent)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
    [event.id, event.key_id, event.type, event.occurred_at, payloadOf(event), event.traceparent ?? null],
  );
  if (!rowCount || endpointIds.length === 0) return 0;
  const inserted = await client.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, key_id, next_attempt_at)
     SELECT t.id, $2, t.endpoint_id, $3, now() FROM unnest($1::text[], $4::text[]) AS t(id, endpoint_id)
     ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
    [endpointIds.map(() => newDeliveryId()), event.id, event.key_id, endpointIds],
  );
  return inserted.rowCount ?? 0;
}

/**
 * One delivery per enabled endpoint of the event's key whose filter takes its type. A second
 * enqueue of the same event id (a redelivered queue message) adds nothing.
 */
export async function enqueueEvent(client: Queryable, event: StoredEvent): Promise<number> {
  if (!isDeliverable(event.type)) return 0;
  const { rows } = await client.query<{ id: string; events: string[] }>(
    `SELECT id, events FROM webhook_endpoints WHERE key_id = $1 AND status = 'enabled'`,
    [event.key_id],
  );
  const targets = rows.filter((row) => matchesFilter(row.events, event.type)).map((row) => row.id);
  return insertEvent(client, event, targets);
}

export async function enqueueTest(
  client: Queryable,
  keyId: string,
  endpointId: string,
): Promise<string | null> {
  const { rowCount } = await client.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND key_id = $2', [
    endpointId,
    keyId,
  ]);
  if (!rowCount) return null;
  const now = new Date().toISOString();
  const event: StoredEvent = {
    id: newEventId(),
    key_id: keyId,
    type: 'webhook.test',
    occurred_at: now,
    data: { endpoint_id: endpointId, updated_at: now },
  };
  await insertEvent(client, event, [endpointId]);
  return event.id;
}

/** An endpoint's deliveries, newest first; null when the key has no such endpoint. */
export async function listDeliveries(
  client: Queryable,
  keyId: string,
  endpointId: string,
  query: DeliveryQuery,
): Promise<DeliveryPage | null> {
  const { rowCount } = await client.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 AND key_id = $2', [
    endpointId,
    keyId,
  ]);
  if (!rowCount) return null;
  const limit = Math.min(MAX_PAGE, Math.max(1, Math.trunc(query.limit ?? DEFAULT_PAGE)));
  const { rows } = await client.query<DeliveryRow>(
    `SELECT d.id, d.event_id, e.type, d.status, d.attempts, d.response_status, d.response_ms, d.error,
            d.created_at, d.next_attempt_at
     FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
     WHERE d.endpoint_id = $1
       AND ($2::text IS NULL OR d.status = $2)
       AND ($3::text IS NULL OR d.id < $3)
     ORDER BY d.id DESC
     LIMIT $4`,
    [endpointId, query.status ?? null, query.after ?? null, limit + 1],
  );
  return { data: rows.slice(0, limit).map(deliveryView), has_more: rows.length > limit };
}

/**
 * Sends the delivery's event again, at once, with the same event id. A lease in flight is
 * dropped: its outcome, when it arrives, no longer counts (the receiver may see both, and the
 * shared webhook-id lets it tell).
 */
export async function redeliver(
  client: Queryable,
  keyId: string,
  endpointId: string,
  deliveryId: string,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE webhook_deliveries
     SET status = 'pending', next_attempt_at = now(), lease_owner = NULL, lease_until = NULL, updated_at = now()
     WHERE id = $1 AND endpoint_id = $2 AND key_id = $3`,
    [deliveryId, endpointId, keyId],
  );
  return (rowCount ?? 0) > 0;
}
