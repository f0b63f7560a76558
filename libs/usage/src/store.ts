import type { Capability, Meter, MeterValues, UsageRecord } from './meters.js';
import type { QuotaPeriod, Quotas } from './quotas.js';

export type Bucket = 'hour' | 'day';
/** What usage may be split by; `meter` is always split (amounts of different meters never add up). */
export type GroupBy = 'capability' | 'model' | 'meter' | 'key_id';

export interface UsageQuery {
  /** The keys whose usage to sum; null = every key (admin). */
  keyIds: readonly string[] | null;
  /** Bucket edges (UTC): start is already floored and end ceiled to the bucket by the caller. */
  start: Date;
  end: Date;
  bucket: Bucket;
  groupBy: readonly GroupBy[];
}

export interface UsageResult {
  /** Present only when grouped by key_id. */
  key_id?: string;
  /** null where the query did not split by it. */
  capability: Capability | null;
  model: string | null;
  meter: Meter;
  value: number;
}

export interface UsageBucket {
  start: string;
  end: string;
  results: UsageResult[];
}

export interface UsageReport {
  object: 'usage';
  start: string;
  end: string;
  bucket: Bucket;
  /** Every bucket from start to end, empty ones included, oldest first. */
  data: UsageBucket[];
}

/**
 * What a call asks of the quotas before its work starts. `reserve` holds amounts of meters whose
 * cost is known up front; `check` names the other meters the work will spend, which are refused
 * once used up. A meter without a quota in `quotas` is neither reserved nor checked.
 */
export interface AdmissionRequest {
  /** Unique per piece of work; settle() and release() name it (a job id, a call's record id). */
  reservation_id: string;
  key_id: string;
  quotas: Quotas;
  reserve: MeterValues;
  check: readonly Meter[];
  /** When an unsettled reservation stops counting (a gateway that died mid-call releases nothing). */
  expires_at: Date;
  now?: Date;
}

/** A quota notice due for publication (usage.quota.warning / usage.quota.exceeded), once per period. */
export interface QuotaNotice {
  kind: 'warning' | 'exceeded';
  key_id: string;
  meter: Meter;
  limit: number;
  period: QuotaPeriod;
  period_start: string;
  period_end: string;
  used: number;
}

export type Admission =
  | { admitted: true }
  | {
      admitted: false;
      /** The meter whose quota refused the work (the error's `param`). */
      meter: Meter;
      /** Seconds to the end of that quota's period (the refusal's Retry-After). */
      retry_after_seconds: number;
      /** Set on the first refusal of the period only (published as usage.quota.exceeded). */
      notice: QuotaNotice | null;
    };

export interface SettleResult {
  /** False when a record of that id was already stored: the usage was not counted again. */
  recorded: boolean;
  /** Quotas the record pushed past 80 % for the first time this period. */
  notices: QuotaNotice[];
}

/**
 * The usage store, shared by every gateway replica: durable, exactly once per record id, and
 * the one place quota reservations are made, so they hold across replicas.
 */
export interface UsageStore {
  /**
   * Stores a record unless one of its id exists, and drops the reservation of that id (if any)
   * in the same transaction. `quotas` (the key's, for the 80 % warnings) may be omitted.
   */
  record(record: UsageRecord, quotas?: Quotas, reservationId?: string): Promise<SettleResult>;
  /** Reserves or checks quota for a piece of work; refused work reserves nothing. */
  admit(request: AdmissionRequest): Promise<Admission>;
  /** Gives back what a reservation holds (work failed or was cancelled). Idempotent. */
  release(reservationId: string): Promise<void>;
  query(query: UsageQuery): Promise<UsageReport>;
  /** How much of `meter` the key used (settled plus reserved) in the period containing `at`. */
  used(
    keyId: string,
    meter: Meter,
    period: QuotaPeriod,
    at?: Date,
  ): Promise<{ settled: number; reserved: number }>;
  /** The store answered its last probe. */
  readonly healthy: boolean;
  close(): Promise<void>;
}
