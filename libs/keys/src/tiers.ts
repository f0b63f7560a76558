/**
 * The one definition of the tiers (basic < professional < enterprise): their names, in rank
 * order, and each tier's default limits. The gateway's config (TIER_POLICIES overrides), its OpenAPI document and the
 * admin dashboard all read these.
 */
import type { Quotas } from '@switchboard/usage';

export const tiers = ['basic', 'professional', 'enterprise'] as const;
export type Tier = (typeof tiers)[number];

export interface TierPolicy {
  requests_per_minute: number;
  /** Live browser sessions at once, cluster-wide. */
  browser_sessions: number;
  /** The largest upload (summed over a request's files). */
  upload_limit_bytes: number;
  /** Animation jobs queued or running at once; 0 = no access to /animate. */
  animation_jobs: number;
  /** Calls running or waiting at once to one capability (llm, whisper, diffusion), cluster-wide. */
  model_calls: number;
  /** Usage caps per meter over a UTC day or month; a key's own `quotas` override them meter by meter. */
  quotas: Quotas;
}

export type TierPolicies = Readonly<Record<Tier, Readonly<TierPolicy>>>;

const MB = 1_000_000;

export const defaultTierPolicies: TierPolicies = Object.freeze({
  basic: Object.freeze({
    requests_per_minute: 60,
    browser_sessions: 2,
    upload_limit_bytes: 25 * MB,
    animation_jobs: 0,
    model_calls: 2,
    quotas: Object.freeze({}),
  }),
  professional: Object.freeze({
    requests_per_minute: 600,
    browser_sessions: 10,
    upload_limit_bytes: 100 * MB,
    animation_jobs: 2,
    model_calls: 8,
    quotas: Object.freeze({}),
  }),
  enterprise: Object.freeze({
    requests_per_minute: 6000,
    browser_sessions: 50,
    upload_limit_bytes: 500 * MB,
    animation_jobs: 10,
    model_calls: 32,
    quotas: Object.freeze({}),
  }),
});

/** 0 for the lowest tier; a route's minimum tier is met when the key's rank is at least its rank. */
export function tierRank(tier: Tier): number {
  return tiers.indexOf(tier);
}
