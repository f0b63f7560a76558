/** The stored shape of a key (JSON in NATS KV, one entry per key id). */

import { parseQuotas, type QuotaOverrides } from '@switchboard/usage';
import { tiers, type Tier } from './tiers.js';

export type KeyStatus = 'active' | 'revoked';

export interface StoredSecret {
  /**
   * How `hash` was made: `hmac-sha256` (PEPPERED_ALG, secret-hash.ts) for every secret this version
   * writes. Absent on records written before peppering, whose `hash` is the plain SHA-256 of the
   * secret: such an entry is never accepted, only migrated (legacy-migration.ts). Other values are
   * kept but never accepted, so a record from a newer version is not thrown away whole.
   */
  alg?: string;
  /** Hex hash of the secret, as `alg` says. */
  hash: string;
  /** ISO time after which this secret no longer works (set by rotation); null = no end. */
  expires_at: string | null;
}

export interface KeyRecord {
  id: string;
  name: string;
  tier: Tier;
  ip_allowlist: string[];
  rate_limit_per_minute: number | null;
  created_at: string;
  status: KeyStatus;
  prefix: string;
  secrets: StoredSecret[];
  /** The key's own quotas over its tier's (null = the tier's quota removed); absent on older records. */
  quotas?: QuotaOverrides;
}

/** What admin responses show: never hashes. */
export interface PublicKeyView {
  id: string;
  name: string;
  tier: Tier;
  ip_allowlist: string[];
  rate_limit_per_minute: number | null;
  created_at: string;
  prefix: string;
  last_used_at: string | null;
  status: KeyStatus;
  /** The key's own quota overrides ({} when it has none). */
  quotas: QuotaOverrides;
}

/** The fields of a view; KeyStore.publicView() is the one way to get a view, with the last use. */
export function viewFields(record: KeyRecord, lastUsedAt: string | null): PublicKeyView {
  return {
    id: record.id,
    name: record.name,
    tier: record.tier,
    ip_allowlist: [...record.ip_allowlist],
    rate_limit_per_minute: record.rate_limit_per_minute,
    created_at: record.created_at,
    prefix: record.prefix,
    last_used_at: lastUsedAt,
    status: record.status,
    quotas: { ...record.quotas },
  };
}

const HASH_PATTERN = /^[0-9a-f]{64}$/;

function isStoredSecret(value: unknown): value is StoredSecret {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    (s['alg'] === undefined || typeof s['alg'] === 'string') &&
    typeof s['hash'] === 'string' &&
    HASH_PATTERN.test(s['hash']) &&
    (s['expires_at'] === null || typeof s['expires_at'] === 'string')
  );
}

function isQuotaOverrides(value: unknown): boolean {
  try {
    parseQuotas(value, 'quotas', true);
    return true;
  } catch {
    return false;
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * Shape check for what comes back from the KV: a record another (maybe newer or older) replica
 * wrote. A record that fails is ignored rather than trusted half-way. Passing says nothing about
 * who wrote it: a secret is honoured only if its hash was made with the gateways' pepper (view.ts).
 */
export function isKeyRecord(value: unknown): value is KeyRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r['id'] === 'string' &&
    typeof r['name'] === 'string' &&
    (tiers as readonly unknown[]).includes(r['tier']) &&
    isStringArray(r['ip_allowlist']) &&
    (r['rate_limit_per_minute'] === null || typeof r['rate_limit_per_minute'] === 'number') &&
    typeof r['created_at'] === 'string' &&
    (r['status'] === 'active' || r['status'] === 'revoked') &&
    typeof r['prefix'] === 'string' &&
    Array.isArray(r['secrets']) &&
    r['secrets'].every(isStoredSecret) &&
    (r['quotas'] === undefined || isQuotaOverrides(r['quotas']))
  );
}
