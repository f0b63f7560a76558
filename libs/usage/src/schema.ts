import type { PoolClient } from 'pg';

/**
 * The usage store's tables. Every gateway replica runs migrate() at start-up; an advisory lock
 * makes them take turns, and each step is idempotent, so replicas of different versions starting
 * together leave one schema.
 *
 * - usage_records: one row per piece of work, keyed by its record id: the primary key is what
 *   makes a retried call, a redelivered job or a second replica's copy count once.
 * - usage_hourly / usage_daily: rollups the queries read, written in the same transaction as the
 *   record they add (so they never disagree with it).
 * - quota_reservations: costs held for work in progress, counted against quotas until settled,
 *   released or expired.
 * - quota_notices: which quota events a period has already had, so each is published once.
 */
const MIGRATION_LOCK = 0x5b_75_73_61; // any constant the cluster's other advisory locks do not use

/** An hourly or daily rollup: one sum per key, bucket start, capability, model and meter. */
function rollupTable(name: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (
       key_id text NOT NULL,
       bucket timestamptz NOT NULL,
       capability text NOT NULL,
       model text NOT NULL,
       meter text NOT NULL,
       value double precision NOT NULL,
       PRIMARY KEY (key_id, bucket, capability, model, meter)
     )`,
    `CREATE INDEX IF NOT EXISTS ${name}_bucket ON ${name} (bucket)`,
  ];
}

const steps: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS usage_records (
     id text PRIMARY KEY,
     key_id text NOT NULL,
     capability text NOT NULL,
     model text NOT NULL,
     at timestamptz NOT NULL,
     meter_values jsonb NOT NULL,
     recorded_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX IF NOT EXISTS usage_records_recorded_at ON usage_records (recorded_at)`,
  ...rollupTable('usage_hourly'),
  ...rollupTable('usage_daily'),
  `CREATE INDEX IF NOT EXISTS usage_daily_key_meter ON usage_daily (key_id, meter, bucket)`,
  `CREATE TABLE IF NOT EXISTS quota_reservations (
     reservation_id text NOT NULL,
     meter text NOT NULL,
     key_id text NOT NULL,
     amount double precision NOT NULL,
     created_at timestamptz NOT NULL,
     expires_at timestamptz NOT NULL,
     PRIMARY KEY (reservation_id, meter)
   )`,
  `CREATE INDEX IF NOT EXISTS quota_reservations_key_meter ON quota_reservations (key_id, meter, created_at)`,
  `CREATE TABLE IF NOT EXISTS quota_notices (
     key_id text NOT NULL,
     meter text NOT NULL,
     period_start timestamptz NOT NULL,
     kind text NOT NULL,
     PRIMARY KEY (key_id, meter, period_start, kind)
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
