import { Database, type Queryable } from '@switchboard/postgres';
import type { Logger } from '@switchboard/telemetry';
import { reportFrom, type BucketRow } from './report.js';
import { migrate } from './schema.js';
import { periodBounds, secondsToPeriodEnd, type QuotaPeriod, type Quotas } from './quotas.js';
import type { Meter, UsageRecord } from './meters.js';
import type {
  Admission,
  AdmissionRequest,
  QuotaNotice,
  SettleResult,
  GroupBy,
  UsageQuery,
  UsageReport,
  UsageStore,
} from './store.js';

export interface UsageStoreOptions {
  /** postgresql:// URL, credentials included. */
  url: string;
  logger?: Logger;
  /** Connections per gateway replica. */
  poolSize?: number;
  /** Raw records older than this are deleted (rollups stay); it bounds how late a copy is still recognised. */
  recordRetentionDays?: number;
}

const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const PRUNE_BATCH = 10_000;
const WARNING_SHARE = 0.8;
const REPORT_WORK_MEM = '128MB';

/**
 * Inserts records (a batch, as arrays) unless their id is stored, and adds only the inserted ones
 * to both rollups, in one statement: the rollups can never count a record the primary key refused.
 */
const RECORD_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::jsonb[])
    AS t(id, key_id, capability, model, at, meter_values)
),
inserted AS (
  INSERT INTO usage_records (id, key_id, capability, model, at, meter_values)
  SELECT id, key_id, capability, model, at, meter_values FROM input
  ON CONFLICT (id) DO NOTHING
  RETURNING id, key_id, capability, model, at, meter_values
),
amounts AS (
  SELECT key_id, capability, model, at, m.key AS meter, m.value::double precision AS value
  FROM inserted, jsonb_each_text(inserted.meter_values) AS m
),
hourly AS (
  INSERT INTO usage_hourly (key_id, bucket, capability, model, meter, value)
  SELECT key_id, date_trunc('hour', at, 'UTC'), capability, model, meter, sum(value)
  FROM amounts GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT (key_id, bucket, capability, model, meter)
  DO UPDATE SET value = usage_hourly.value + excluded.value
),
daily AS (
  INSERT INTO usage_daily (key_id, bucket, capability, model, meter, value)
  SELECT key_id, date_trunc('day', at, 'UTC'), capability, model, meter, sum(value)
  FROM amounts GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT (key_id, bucket, capability, model, meter)
  DO UPDATE SET value = usage_daily.value + excluded.value
)
SELECT id FROM inserted`;

const SETTLED_SQL = `
SELECT coalesce(sum(value), 0)::double precision AS total FROM usage_daily
WHERE key_id = $1 AND meter = $2 AND bucket >= $3 AND bucket < $4`;

const RESERVED_SQL = `
SELECT coalesce(sum(amount), 0)::double precision AS total FROM quota_reservations
WHERE key_id = $1 AND meter = $2 AND created_at >= $3 AND created_at < $4 AND expires_at > $5`;

/** Opens the PostgreSQL usage store, creating or upgrading its tables first. */
export async function openUsageStore(options: UsageStoreOptions): Promise<UsageStore & PostgresUsageStore> {
  const store = new PostgresUsageStore(options);
  await store.ready();
  return store;
}

export class PostgresUsageStore implements UsageStore {
  private readonly db: Database;
  private readonly logger: Logger | undefined;
  private readonly retentionDays: number;
  private readonly pruneTimer: NodeJS.Timeout;

  constructor(options: UsageStoreOptions) {
    this.logger = options.logger;
    this.retentionDays = options.recordRetentionDays ?? 400;
    this.db = new Database({
      url: options.url,
      name: 'usage store',
      applicationName: 'switchboard-gateway',
      migrate,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    });
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  get healthy(): boolean {
    return this.db.healthy;
  }

  /** Creates or upgrades the tables; a database not reachable yet is retried by the next call. */
  ready(): Promise<void> {
    return this.db.open();
  }

  async record(record: UsageRecord, quotas: Quotas = {}, reservationId?: string): Promise<SettleResult> {
    return this.db.transaction(async (client) => {
      // Meters under a quota are locked as admit() locks them, so the 80 % check sees every
      // record before it and a crossing is never missed between two concurrent records.
      const quotaMeters = meterList(record.values).filter((meter) => quotas[meter] !== undefined);
      await lockMeters(client, record.key_id, quotaMeters);
      const inserted = await insertRecords(client, [record]);
      if (reservationId !== undefined) {
        await client.query('DELETE FROM quota_reservations WHERE reservation_id = $1', [reservationId]);
      }
      if (inserted === 0) return { recorded: false, notices: [] };
      const notices: QuotaNotice[] = [];
      for (const meter of quotaMeters) {
        const quota = quotas[meter]!;
        const { start, end } = periodBounds(quota.period, record.at);
        if (record.at < start || record.at >= end) continue;
        const after = await total(client, SETTLED_SQL, [record.key_id, meter, start, end]);
        const before = after - (record.values[meter] ?? 0);
        const threshold = quota.limit * WARNING_SHARE;
        if (before < threshold && after >= threshold) {
          const notice = await firstNotice(
            client,
            'warning',
            record.key_id,
            meter,
            quota.limit,
            quota.period,
            start,
            end,
            after,
          );
          if (notice) notices.push(notice);
        }
      }
      return { recorded: true, notices };
    });
  }

  /** Many records in one transaction (bulk loads, back-fills): same de-duplication, no quota checks. */
  async recordMany(records: readonly UsageRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    return this.db.transaction((client) => insertRecords(client, records));
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const now = request.now ?? new Date();
    const meters = [...new Set([...meterList(request.reserve), ...request.check])]
      .filter((meter) => request.quotas[meter] !== undefined)
      .sort();
    if (meters.length === 0) return { admitted: true };
    return this.db.transaction(async (client) => {
      await lockMeters(client, request.key_id, meters);
      for (const meter of meters) {
        const quota = request.quotas[meter]!;
        const { start, end } = periodBounds(quota.period, now);
        const used =
          (await total(client, SETTLED_SQL, [request.key_id, meter, start, end])) +
          (await total(client, RESERVED_SQL, [request.key_id, meter, start, end, now]));
        const amount = request.reserve[meter];
        const refused = amount === undefined ? used >= quota.limit : used + amount > quota.limit;
        if (refused) {
          const notice = await firstNotice(
            client,
            'exceeded',
            request.key_id,
            meter,
            quota.limit,
            quota.period,
            start,
            end,
            used,
          );
          return {
            admitted: false,
            meter,
            retry_after_seconds: secondsToPeriodEnd(quota.period, now),
            notice,
          };
        }
      }
      for (const meter of meters) {
        const amount = request.reserve[meter];
        if (amount === undefined || amount <= 0) continue;
        await client.query(
          `INSERT INTO quota_reservations (reservation_id, meter, key_id, amount, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (reservation_id, meter) DO UPDATE SET amount = excluded.amount, expires_at = excluded.expires_at`,
          [request.reservation_id, meter, request.key_id, amount, now, request.expires_at],
        );
      }
      return { admitted: true };
    });
  }

  async release(reservationId: string): Promise<void> {
    await this.db.transaction((client) =>
      client.query('DELETE FROM quota_reservations WHERE reservation_id = $1', [reservationId]),
    );
  }

  async used(
    keyId: string,
    meter: Meter,
    period: QuotaPeriod,
    at: Date = new Date(),
  ): Promise<{ settled: number; reserved: number }> {
    const { start, end } = periodBounds(period, at);
    await this.db.schema();
    return this.db.withClient(async (client) => ({
      settled: await total(client, SETTLED_SQL, [keyId, meter, start, end]),
      reserved: await total(client, RESERVED_SQL, [keyId, meter, start, end, at]),
    }));
  }

  async query(query: UsageQuery): Promise<UsageReport> {
    await this.db.schema();
    const table = query.bucket === 'hour' ? 'usage_hourly' : 'usage_daily';
    const by = (dimension: GroupBy) => query.groupBy.includes(dimension);
    const splits = [
      ...(by('key_id') ? ['key_id'] : []),
      ...(by('capability') ? ['capability'] : []),
      ...(by('model') ? ['model'] : []),
      'meter',
    ];
    // With key_id first and then bucket: the rollups' primary key order.
    const grouped = (by('key_id') ? ['key_id', 'bucket', ...splits.slice(1)] : ['bucket', ...splits]).join(
      ', ',
    );
    // Each result as the API shows it, built by PostgreSQL: a report over every key is up to a
    // row per key, day and series, and JSON made there (one array per bucket) reaches the gateway
    // far cheaper than as that many rows to parse one by one.
    const fields = [
      ...(by('key_id') ? ["'key_id', key_id"] : []),
      by('capability') ? "'capability', capability" : "'capability', NULL",
      by('model') ? "'model', nullif(model, '')" : "'model', NULL",
      "'meter', meter",
      "'value', value",
    ].join(', ');
    const order = splits.join(', ');
    const params: unknown[] = [query.start, query.end];
    let keyFilter = '';
    if (query.keyIds !== null) {
      params.push(query.keyIds);
      keyFilter = 'AND key_id = ANY($3::text[])';
    }
    const rows = await this.db.withClient(async (client) => {
      await client.query('BEGIN READ ONLY');
      try {
        // Sorting up to a million rows: in memory, not on disk.
        await client.query(`SET LOCAL work_mem = '${REPORT_WORK_MEM}'`);
        // Split by key: one row per key and bucket, in the rollups' primary key order, so no step
        // has to sort every row; the caller joins a bucket's rows, which arrive in key order.
        const outer = by('key_id') ? 'key_id, bucket' : 'bucket';
        const result = await client.query<BucketRow>(
          `SELECT (extract(epoch FROM bucket) * 1000)::double precision AS at,
                  json_agg(json_build_object(${fields}) ORDER BY ${order}) AS results
           FROM (SELECT ${grouped}, sum(value)::double precision AS value FROM ${table}
                 WHERE bucket >= $1 AND bucket < $2 ${keyFilter}
                 GROUP BY ${grouped}) AS sums
           GROUP BY ${outer}
           ORDER BY ${outer}`,
          params,
        );
        return result.rows;
      } finally {
        await client.query('COMMIT').catch(() => undefined);
      }
    });
    return reportFrom(query, rows);
  }

  /** Deletes raw records past retention, a batch at a time (any replica may run it; it is idempotent). */
  private async prune(): Promise<void> {
    try {
      for (;;) {
        const { rowCount } = await this.db.query(
          `DELETE FROM usage_records WHERE id IN (
             SELECT id FROM usage_records WHERE recorded_at < now() - make_interval(days => $1) LIMIT $2)`,
          [this.retentionDays, PRUNE_BATCH],
        );
        if (!rowCount || rowCount < PRUNE_BATCH || this.db.isClosed) break;
      }
      await this.db.query(`DELETE FROM quota_reservations WHERE expires_at < now() - interval '1 day'`);
    } catch (error) {
      this.logger?.warn({ err: error }, 'usage record pruning failed');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.pruneTimer);
    await this.db.close();
  }
}

function meterList(values: UsageRecord['values']): Meter[] {
  return (Object.keys(values) as Meter[]).filter((meter) => Number.isFinite(values[meter]));
}

async function lockMeters(client: Queryable, keyId: string, meters: readonly Meter[]): Promise<void> {
  // Sorted, so two transactions locking the same meters can never wait on each other in a cycle.
  for (const meter of [...meters].sort()) {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${keyId}/${meter}`]);
  }
}

async function insertRecords(client: Queryable, records: readonly UsageRecord[]): Promise<number> {
  const { rowCount } = await client.query(RECORD_SQL, [
    records.map((r) => r.id),
    records.map((r) => r.key_id),
    records.map((r) => r.capability),
    records.map((r) => r.model ?? ''),
    records.map((r) => r.at),
    records.map((r) => JSON.stringify(Object.fromEntries(meterList(r.values).map((m) => [m, r.values[m]])))),
  ]);
  return rowCount ?? 0;
}

async function total(client: Queryable, sql: string, params: unknown[]): Promise<number> {
  const { rows } = await client.query<{ total: number }>(sql, params);
  return rows[0]?.total ?? 0;
}

/** The notice, if this is the period's first of its kind for the key and meter (else null). */
async function firstNotice(
  client: Queryable,
  kind: QuotaNotice['kind'],
  keyId: string,
  meter: Meter,
  limit: number,
  period: QuotaPeriod,
  start: Date,
  end: Date,
  used: number,
): Promise<QuotaNotice | null> {
  const { rowCount } = await client.query(
    `INSERT INTO quota_notices (key_id, meter, period_start, kind) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [keyId, meter, start, kind],
  );
  if (!rowCount) return null;
  return {
    kind,
    key_id: keyId,
    meter,
    limit,
    period,
    period_start: start.toISOString(),
    period_end: end.toISOString(),
    used,
  };
}
