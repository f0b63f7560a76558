import type { KV } from 'nats';
import type { Logger } from '@switchboard/telemetry';
import { encodeRecord, isConflict, WRITE_ATTEMPTS } from './kv-write.js';
import { isKeyRecord, type KeyRecord, type StoredSecret } from './record.js';
import { PEPPERED_ALG, type SecretHasher } from './secret-hash.js';

/**
 * The one-time upgrade of records written before secrets were peppered, whose `hash` is the plain
 * SHA-256 of the secret. Such entries are never accepted; this adds next to each one its peppered
 * twin, computed from the stored digest, so existing keys keep working without anyone knowing their
 * secrets.
 *
 * The danger is migrating a record an attacker wrote, which would turn a forged SHA-256 into a
 * working key. So only records whose current revision the key store wrote before `writtenBefore`
 * are migrated — by the NATS server's own timestamp, which a writer cannot backdate. The operator
 * picks an instant before which the store held only records it trusts (the upgrade); anything
 * written after it, however long the setting stays, is never migrated. Each write is a
 * compare-and-set on the revision that was checked, so a record changed in between is read again.
 *
 * The legacy entry stays beside its twin: this version ignores it, while gateways of the previous
 * version (still serving during a rolling upgrade, or after a rollback) need it. It goes with the
 * key's next rotation or revocation.
 */

export interface LegacyMigrationResult {
  /** Ids of records that got peppered twins. */
  migrated: string[];
  /** Ids of records with legacy entries written at or after the cutoff: left as they are. */
  refused: string[];
}

type Outcome = 'migrated' | 'refused' | 'current';

function pepperedTwin(id: string, legacy: StoredSecret, hasher: SecretHasher): StoredSecret {
  return {
    alg: PEPPERED_ALG,
    hash: hasher.fromDigest(id, Buffer.from(legacy.hash, 'hex')).toString('hex'),
    expires_at: legacy.expires_at,
  };
}

/** The legacy entries of `record` that have no peppered twin yet. */
export function unmigratedLegacySecrets(record: KeyRecord, hasher: SecretHasher): StoredSecret[] {
  const peppered = new Set(record.secrets.filter((s) => s.alg === PEPPERED_ALG).map((s) => s.hash));
  return record.secrets.filter(
    (s) => s.alg === undefined && !peppered.has(pepperedTwin(record.id, s, hasher).hash),
  );
}

/** `record` with a peppered twin for each legacy entry that lacks one; nothing else changes. */
export function withPepperedTwins(record: KeyRecord, hasher: SecretHasher): KeyRecord {
  const twins = unmigratedLegacySecrets(record, hasher).map((s) => pepperedTwin(record.id, s, hasher));
  return { ...record, secrets: [...twins, ...record.secrets] };
}

function parsed(value: () => unknown): unknown {
  try {
    return value();
  } catch {
    return undefined; // not JSON: the store ignores it too
  }
}

async function migrateRecord(
  kv: KV,
  hasher: SecretHasher,
  id: string,
  writtenBefore: number,
): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const entry = await kv.get(id);
    if (entry === null || entry.operation !== 'PUT') return 'current';
    const record = parsed(() => entry.json());
    if (!isKeyRecord(record) || record.id !== id) return 'current';
    if (unmigratedLegacySecrets(record, hasher).length === 0) return 'current';
    if (entry.created.getTime() >= writtenBefore) return 'refused';
    try {
      await kv.update(id, encodeRecord(withPepperedTwins(record, hasher)), entry.revision);
      return 'migrated';
    } catch (error) {
      if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

/** Migrates every record of the bucket that qualifies (see above). Safe to run on many replicas at once. */
export async function migrateLegacyHashes(
  kv: KV,
  hasher: SecretHasher,
  writtenBefore: number,
  logger?: Logger,
): Promise<LegacyMigrationResult> {
  const ids: string[] = [];
  for await (const id of await kv.keys()) ids.push(id);
  const result: LegacyMigrationResult = { migrated: [], refused: [] };
  for (const id of ids) {
    const outcome = await migrateRecord(kv, hasher, id, writtenBefore);
    if (outcome === 'current') continue;
    result[outcome].push(id);
    if (outcome === 'refused')
      logger?.warn({ key_id: id }, 'legacy key hashes written after the migration cutoff were not migrated');
  }
  logger?.info(
    { migrated: result.migrated.length, refused: result.refused.length },
    'legacy key hash migration done',
  );
  return result;
}
