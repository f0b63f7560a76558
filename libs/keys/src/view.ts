import { timingSafeEqual } from 'node:crypto';
import { parseApiKey } from './format.js';
import { deepFreeze } from '@switchboard/config';
import type { KeyRecord, StoredSecret } from './record.js';
import { PEPPERED_ALG, type SecretHasher } from './secret-hash.js';

interface Entry {
  record: KeyRecord;
  /** KV revision the record was read at; older writes never replace newer ones. */
  revision: number;
  /** Peppered hashes decoded once, so the hot path does no hex parsing. */
  digests: { digest: Buffer; expiresAt: number }[];
}

/**
 * Only peppered hashes can ever match. A legacy SHA-256 entry, or one under an `alg` this version
 * does not know, is skipped: anyone who can write the store can compute a SHA-256, nobody without
 * the pepper can compute the HMAC.
 */
function acceptedDigests(secrets: readonly StoredSecret[]): Entry['digests'] {
  return secrets
    .filter((s) => s.alg === PEPPERED_ALG)
    .map((s) => ({
      digest: Buffer.from(s.hash, 'hex'),
      expiresAt: s.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(s.expires_at),
    }));
}

/**
 * This replica's copy of the key bucket: fed by the KV watch and by our own writes, read
 * synchronously by authenticate() on every request.
 */
export class KeyView {
  private readonly entries = new Map<string, Entry>();
  /** Revision of deletes (a purge by an operator), so a late, older put cannot resurrect the key. */
  private readonly removedAt = new Map<string, number>();

  constructor(private readonly hasher: SecretHasher) {}

  /** Applies a record at a revision; returns false when we already hold something newer. */
  apply(record: KeyRecord, revision: number): boolean {
    const current = this.entries.get(record.id);
    if (current !== undefined && current.revision >= revision) return false;
    if ((this.removedAt.get(record.id) ?? 0) >= revision) return false;
    const frozen = deepFreeze(structuredClone(record));
    this.entries.set(record.id, { record: frozen, revision, digests: acceptedDigests(frozen.secrets) });
    return true;
  }

  remove(id: string, revision: number): void {
    const current = this.entries.get(id);
    if (current !== undefined && current.revision >= revision) return;
    this.entries.delete(id);
    this.removedAt.set(id, revision);
  }

  get(id: string): KeyRecord | undefined {
    return this.entries.get(id)?.record;
  }

  all(): KeyRecord[] {
    return [...this.entries.values()].map((e) => e.record);
  }

  /**
   * The hot path. The presented secret's peppered hash is compared with every live hash of the
   * key in constant time (equal 32-byte lengths, no early exit), so timing says nothing about how
   * close a guess was. An unknown id costs the same hash, so ids are not cheaper to probe.
   */
  authenticate(rawKey: unknown, now = Date.now()): KeyRecord | null {
    const parsed = parseApiKey(rawKey);
    if (parsed === null) return null;
    const presented = this.hasher.hash(parsed.id, parsed.secret);
    const entry = this.entries.get(parsed.id);
    if (entry === undefined || entry.record.status !== 'active') return null;
    let ok = false;
    for (const { digest, expiresAt } of entry.digests) {
      if (digest.length === presented.length && timingSafeEqual(digest, presented) && expiresAt > now)
        ok = true;
    }
    return ok ? entry.record : null;
  }
}
