import type { KeyRecord } from './record.js';

/** Optimistic-concurrency retries: conflicts only happen when two writers change one key at once. */
export const WRITE_ATTEMPTS = 5;

const WRONG_LAST_SEQUENCE = 10071;

/** The KV refused a write because the record changed since it was read (or, for create, exists). */
export function isConflict(error: unknown): boolean {
  return (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code === WRONG_LAST_SEQUENCE;
}

export const encodeRecord = (record: KeyRecord): Uint8Array =>
  new TextEncoder().encode(JSON.stringify(record));
