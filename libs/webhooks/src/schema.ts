import type { PoolClient } from 'pg';

/**
 * The webhooks' tables. Every gateway and sender replica runs migrate() at start-up; an advisory
 * lock makes them take turns, and each step is idempotent.
 *
 * - webhook_endpoints: a key's endpoints with their filter and state; failing_since marks the
 *   start of an unbroken run of failures (the 5-day rule).
 * - webhook_secrets: signing secrets, sealed (AES-256-GCM); active while expires_at is unset or ahead.
 * - webhook_events: each event once, with the exact body sent (json keeps its bytes as written,
 *   so every attempt signs and sends the same body).
 * - webhook_deliveries: one per event and endpoint (the unique pair makes enqueueing idempotent),
 *   with the lease a sender holds while it is in flight.
 * - webhook_attempts: the delivery log, one row per attempt.
 */
const MIGRATION_LOCK = 0x77_68_6b_73; // 'whks': any constant the cluster's other advisory locks do not use

const steps: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS webhook_endpoints (
     id text PRIMARY KEY,
     key_id text NOT NULL,
     url text NOT NULL,
     events text[] NOT NULL,
     description text,
     status text NOT NULL DEFAULT 'enabled',
     disabled_reason text,
     failing_since timestamptz,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS webhook_endpoints_key ON webhook_endpoints (key_id)`,
  `CREATE TABLE IF NOT EXISTS webhook_secrets (
     endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     id serial PRIMARY KEY,
     sealed bytea NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     expires_at timestamptz
   )`,
  `CREATE INDEX IF NOT EXISTS webhook_secrets_endpoint ON webhook_secrets (endpoint_id)`,
  `CREATE TABLE IF NOT EXISTS webhook_events (
     id text PRIMARY KEY,
     key_id text NOT NULL,
     type text NOT NULL,
     occurred_at timestamptz NOT NULL,
     payload json NOT NULL,
     traceparent text,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS webhook_events_created_at ON webhook_events (created_at)`,
  // Ids in byte order ("C"): the log pages by comparing them, whatever the database's locale.
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
     id text COLLATE "C" PRIMARY KEY,
     event_id text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
     endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
     key_id text NOT NULL,
     status text NOT NULL DEFAULT 'pending',
     attempts integer NOT NULL DEFAULT 0,
     next_attempt_at timestamptz,
     lease_owner text,
     lease_until timestamptz,
     response_status integer,
     response_ms integer,
     error text,
     created_at timestamptz NOT NULL DEFAULT now(),
     updated_at timestamptz NOT NULL DEFAULT now(),
     UNIQUE (event_id, endpoint_id)
   )`,
  // The log pages an endpoint's deliveries newest first, by id (ids sort by creation time).
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id)`,
  // Senders look only at pending rows, oldest due first.
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
     WHERE status = 'pending'`,
  `CREATE INDEX IF NOT EXISTS webhook_deliveries_created_at ON webhook_deliveries (created_at)`,
  `CREATE TABLE IF NOT EXISTS webhook_attempts (
     delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
     attempt integer NOT NULL,
     started_at timestamptz NOT NULL,
     response_status integer,
     response_ms integer,
     error text,
     response_body text,
     PRIMARY KEY (delivery_id, attempt)
   )`,
];

export async function migrate(client: PoolClient): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    for (const step of steps) await client.query(step);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
