import type { KeyRecord, TierPolicies } from '@switchboard/keys';
import { effectiveQuotas, type Quotas } from '@switchboard/usage';

/** The quotas that bind a key now: its tier's, with the key's own overrides applied meter by meter. */
export function quotasOfKey(tiers: TierPolicies, key: KeyRecord): Quotas {
  return effectiveQuotas(tiers[key.tier].quotas, key.quotas);
}
