import type { SessionRecord__Output, WorkerRecord__Output } from '@switchboard/contracts';

export type WorkerRecord = WorkerRecord__Output;
export type SessionRecord = SessionRecord__Output & {
  session: NonNullable<SessionRecord__Output['session']>;
};

/** The buckets (registry.proto): one record per worker, one per session. */
export const WORKERS_BUCKET = 'browser_workers';
export const SESSIONS_BUCKET = 'browser_sessions';

/**
 * Session records outlive their session by an hour (`details` answers for an hour after
 * close or expiry), so the bucket's max age is that hour and owners rewrite active records well
 * within it. A worker that died stops rewriting: its records fade out an hour later.
 */
export const SESSION_RECORD_MAX_AGE_MS = 60 * 60 * 1000;
export const SESSION_REFRESH_INTERVAL_MS = 10 * 60 * 1000;
/** Worker records are rewritten every heartbeat; the max age only clears out long-dead workers. */
export const WORKER_RECORD_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * Bucket of keys turned away with `no_capacity` while below their share of the cluster's
 * browsers, key = key id, written and read by gateways only. It is what makes "another key is
 * being refused" the same fact on every gateway replica (each refuses on its own view), so a key
 * above its share cannot take the browser a waiting key was refused on another replica. A record
 * counts for CAPACITY_REFUSAL_WINDOW_MS (six times the 5 s Retry-After, so a client that retries
 * as told is still waiting when it comes back) and is deleted as soon as that key gets a session;
 * the bucket's max age is the same window, so records of keys that gave up fade out on their own.
 */
export const CAPACITY_REFUSALS_BUCKET = 'browser_capacity_refusals';
export const CAPACITY_REFUSAL_WINDOW_MS = 30_000;

/** A key turned away for lack of capacity (gateways' own record; not a worker record). */
export interface CapacityRefusal {
  key_id: string;
  /** Unix ms of the latest refusal. */
  refused_at_ms: number;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export const encodeRecord = (record: WorkerRecord | SessionRecord | CapacityRefusal): Uint8Array =>
  encoder.encode(JSON.stringify(record));

const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A worker record, or null for anything malformed (a bucket is shared; never trust its bytes). */
export function decodeWorker(bytes: Uint8Array): WorkerRecord | null {
  const value = parse(bytes);
  if (
    !value ||
    !isString(value.worker_id) ||
    !isString(value.grpc_address) ||
    !isString(value.devtools_address) ||
    !isCount(value.max_sessions) ||
    !isCount(value.active_sessions) ||
    !isCount(value.warm_browsers) ||
    !isCount(value.updated_at_ms)
  ) {
    return null;
  }
  return value as unknown as WorkerRecord;
}

export function decodeSession(bytes: Uint8Array): SessionRecord | null {
  const value = parse(bytes);
  const session = value?.session as Record<string, unknown> | undefined;
  if (
    !value ||
    !session ||
    !isString(session.session_id) ||
    !isString(session.status) ||
    !isString(session.owner_key_id) ||
    !isString(session.created_at) ||
    !Array.isArray(session.history) ||
    !Array.isArray(session.screenshots) ||
    !isString(value.worker_id) ||
    !isString(value.grpc_address) ||
    !isString(value.devtools_address) ||
    !isCount(value.updated_at_ms)
  ) {
    return null;
  }
  return value as unknown as SessionRecord;
}

export function decodeRefusal(bytes: Uint8Array): CapacityRefusal | null {
  const value = parse(bytes);
  if (!value || !isString(value.key_id) || !isCount(value.refused_at_ms)) return null;
  return { key_id: value.key_id, refused_at_ms: value.refused_at_ms };
}

function parse(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
