// Compare-and-set on a KV entry: read, compute, write with the read revision, retry on conflict.
// Gateways and workers move the same records concurrently (a cancel racing a completion), so every
// change is one of these: the loser re-reads and decides again on what the winner wrote.
import type { KV } from 'nats';

const WRONG_LAST_SEQUENCE = 10071;
const ATTEMPTS = 20;

export function isConflict(error: unknown): boolean {
  return (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code === WRONG_LAST_SEQUENCE;
}

export interface Current<T> {
  readonly value: T;
  readonly revision: number;
}

export async function readEntry<T>(
  kv: KV,
  key: string,
  decode: (bytes: Uint8Array) => T,
): Promise<Current<T> | null> {
  const entry = await kv.get(key);
  if (!entry || entry.operation !== 'PUT' || entry.value.length === 0) return null;
  return { value: decode(entry.value), revision: entry.revision };
}

/**
 * Applies `change` to the current value until the write lands. `change` returns the new value,
 * or `undefined` to leave the entry as it is (the result is then the current value, unchanged).
 * A missing entry is given as null; returning a value creates it.
 */
export async function compareAndSet<T>(
  kv: KV,
  key: string,
  codec: { decode: (bytes: Uint8Array) => T; encode: (value: T) => Uint8Array },
  change: (current: T | null) => T | undefined,
): Promise<{ value: T | null; changed: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const current = await readEntry(kv, key, codec.decode);
    const next = change(current?.value ?? null);
    if (next === undefined) return { value: current?.value ?? null, changed: false };
    try {
      if (current) await kv.update(key, codec.encode(next), current.revision);
      else await kv.create(key, codec.encode(next));
      return { value: next, changed: true };
    } catch (error) {
      // kv.create on a key another writer just created fails like a stale update: re-read.
      const createRace = !current && (error as Error).message?.includes('wrong last sequence');
      if ((!isConflict(error) && !createRace) || attempt >= ATTEMPTS) throw error;
    }
  }
}
