import { activeSecrets } from './endpoints.js';
import { insertEvent } from './deliveries.js';
import { newEventId } from './ids.js';
import type { SecretBox } from './secrets.js';
import { ENDPOINT_COLUMNS, endpointView, type EndpointRow, type Queryable } from './rows.js';
import type { AttemptOutcome, AttemptResult, ClaimedDelivery, ClaimOptions } from './types.js';

/** Claims take turns cluster-wide: the per-endpoint cap counts leases other claimers just took. */
const CLAIM_LOCK = 0x77_68_63_6c; // 'whcl'
const MAX_RESPONSE_BODY = 1024;
const MAX_ERROR = 1024;

/**
 * Due deliveries of enabled endpoints, at most `perEndpoint` in flight per endpoint and `perKey`
 * per key, counting every sender's live leases, so neither one slow endpoint's backlog nor a key
 * whose every endpoint hangs fills a claim: rows past their share are skipped, not waited on.
 * Keys take turns (each key's oldest first, then each key's second…), so a key with a long
 * backlog does not push a quiet key's one delivery behind it.
 */
const CLAIM_SQL = `
WITH live AS (
  SELECT endpoint_id, key_id FROM webhook_deliveries
  WHERE status = 'pending' AND lease_until > now()
),
endpoint_inflight AS (SELECT endpoint_id, count(*)::int AS n FROM live GROUP BY endpoint_id),
key_inflight AS (SELECT key_id, count(*)::int AS n FROM live GROUP BY key_id),
due AS (
  SELECT d.id, d.endpoint_id, d.key_id, d.next_attempt_at,
         row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS endpoint_rank
  FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    AND (d.lease_until IS NULL OR d.lease_until <= now())
    AND e.status = 'enabled'
),
within_endpoint AS (
  SELECT u.*, row_number() OVER (PARTITION BY u.key_id ORDER BY u.next_attempt_at, u.id) AS key_rank
  FROM due u LEFT JOIN endpoint_inflight i ON i.endpoint_id = u.endpoint_id
  WHERE u.endpoint_rank <= $3 - coalesce(i.n, 0)
),
picked AS (
  SELECT w.id FROM within_endpoint w LEFT JOIN key_inflight k ON k.key_id = w.key_id
  WHERE w.key_rank <= $5 - coalesce(k.n, 0)
  ORDER BY w.key_rank, w.next_attempt_at, w.id
  LIMIT $2
)
UPDATE webhook_deliveries d
SET lease_owner = $1, lease_until = now() + make_interval(secs => $4 / 1000.0), updated_at = now()
FROM picked
WHERE d.id = picked.id AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= now())
RETURNING d.id`;

interface ClaimRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  key_id: string;
  url: string;
  attempts: number;
  payload: string;
  traceparent: string | null;
  occurred_at: Date;
}

export async function claimDue(
  client: Queryable,
  box: SecretBox,
  owner: string,
  options: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0 || options.perEndpoint <= 0 || options.perKey <= 0) return [];
  await client.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
  const claimed = await client.query<{ id: string }>(CLAIM_SQL, [
    owner,
    options.limit,
    options.perEndpoint,
    options.leaseMs,
    options.perKey,
  ]);
  if (claimed.rows.length === 0) return [];
  const { rows } = await client.query<ClaimRow>(
    `SELECT d.id, d.event_id, d.endpoint_id, d.key_id, e.url, d.attempts, v.payload::text AS payload,
            v.traceparent, v.occurred_at
     FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN webhook_events v ON v.id = d.event_id
     WHERE d.id = ANY($1::text[])
     ORDER BY d.next_attempt_at, d.id`,
    [claimed.rows.map((row) => row.id)],
  );
  const secrets = await activeSecrets(
    client,
    box,
    rows.map((row) => row.endpoint_id),
  );
  return rows.map((row) => ({
    id: row.id,
    event_id: row.event_id,
    endpoint_id: row.endpoint_id,
    key_id: row.key_id,
    url: row.url,
    attempts: row.attempts,
    payload: row.payload,
    secrets: secrets.get(row.endpoint_id) ?? [],
    ...(row.traceparent ? { traceparent: row.traceparent } : {}),
    created_at: row.occurred_at.toISOString(),
  }));
}

/**
 * Records one attempt's outcome, if `owner` still holds the delivery's lease (otherwise another
 * sender took it over, or it was redelivered, and that one's outcome is the one that counts).
 */
export async function recordAttempt(
  client: Queryable,
  owner: string,
  deliveryId: string,
  outcome: AttemptOutcome,
  disableAfterMs: number,
): Promise<AttemptResult> {
  const { rows: held } = await client.query<{ attempts: number; endpoint_id: string; key_id: string }>(
    `SELECT attempts, endpoint_id, key_id FROM webhook_deliveries
     WHERE id = $1 AND lease_owner = $2 AND status = 'pending' FOR UPDATE`,
    [deliveryId, owner],
  );
  const delivery = held[0];
  if (!delivery) return {};
  const attempt = delivery.attempts + 1;
  const error = outcome.error?.slice(0, MAX_ERROR) ?? null;
  await client.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, response_status, response_ms, error, response_body)
     VALUES ($1, $2, now() - make_interval(secs => $3 / 1000.0), $4, $5, $6, $7)
     ON CONFLICT (delivery_id, attempt) DO NOTHING`,
    [
      deliveryId,
      attempt,
      outcome.responseMs ?? 0,
      outcome.responseStatus,
      outcome.responseMs === null ? null : Math.round(outcome.responseMs),
      error,
      outcome.responseBody === null ? null : truncateUtf8(outcome.responseBody, MAX_RESPONSE_BODY),
    ],
  );
  const finished = outcome.ok || outcome.gone || outcome.nextAttemptAt === null;
  const status = outcome.ok ? 'succeeded' : finished ? 'failed' : 'pending';
  await client.query(
    `UPDATE webhook_deliveries
     SET attempts = $2, status = $3, next_attempt_at = $4, lease_owner = NULL, lease_until = NULL,
         response_status = $5, response_ms = $6, error = $7, updated_at = now()
     WHERE id = $1`,
    [
      deliveryId,
      attempt,
      status,
      finished ? null : outcome.nextAttemptAt,
      outcome.responseStatus,
      outcome.responseMs === null ? null : Math.round(outcome.responseMs),
      error,
    ],
  );
  if (outcome.ok) {
    await client.query(
      'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
      [delivery.endpoint_id],
    );
    return {};
  }
  const { rows } = await client.query<EndpointRow & { failing_too_long: boolean }>(
    `UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, now())
     WHERE id = $1
     RETURNING ${ENDPOINT_COLUMNS},
       failing_since <= now() - make_interval(secs => $2 / 1000.0) AS failing_too_long`,
    [delivery.endpoint_id, disableAfterMs],
  );
  const endpoint = rows[0];
  if (!endpoint || endpoint.status !== 'enabled') return {};
  const reason = outcome.gone ? 'gone' : endpoint.failing_too_long ? 'failing' : null;
  if (reason === null) return {};
  return { disabledEndpoint: await disableEndpoint(client, endpoint.id, endpoint.key_id, reason) };
}

/** Disables the endpoint and tells the key's other enabled endpoints, in the same transaction. */
async function disableEndpoint(client: Queryable, id: string, keyId: string, reason: 'gone' | 'failing') {
  const { rows } = await client.query<EndpointRow>(
    `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, updated_at = now()
     WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
    [id, reason],
  );
  const disabled = endpointView(rows[0]!);
  const { rows: others } = await client.query<{ id: string }>(
    `SELECT id FROM webhook_endpoints WHERE key_id = $1 AND status = 'enabled' AND id <> $2`,
    [keyId, id],
  );
  const now = new Date().toISOString();
  await insertEvent(
    client,
    {
      id: newEventId(),
      key_id: keyId,
      type: 'webhook.endpoint.disabled',
      occurred_at: now,
      data: { ...disabled, reason },
    },
    others.map((other) => other.id),
  );
  return disabled;
}

/** At most `limit` bytes of UTF-8, never cutting a character in two. */
function truncateUtf8(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  return bytes
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
