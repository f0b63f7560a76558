import type { KeyRecord } from '@switchboard/keys';
import { periodBounds, type Meter, type Quota } from '@switchboard/usage';
import { adminSurface, KeyPath, keyStoreErrors } from '../contract/administration.js';
import { adminErrors, json } from '../contract/responses.js';
import { AdminUsageQuery, KeyQuotaStateList, UsageReport } from '../contract/usage.js';
import { route } from '../http/route.js';
import type { GatewayDeps } from '../server.js';
import { usageQueryFrom } from '../usage/query-params.js';
import { readUsage } from '../usage/store-unavailable.js';

export const adminUsageRoute = route({
  method: 'get',
  path: '/admin/api/usage',
  operationId: 'adminUsage',
  ...adminSurface,
  summary: "Any or all keys' usage",
  description: 'As `GET /usage`, for one key (`key_id`) or every key; `group_by` may include `key_id`.',
  query: AdminUsageQuery,
  responses: { 200: { description: 'The usage.', content: json(UsageReport) } },
  errors: [...adminErrors, 'invalid_request', 'unavailable'],
  handle: async ({ query, deps }) =>
    readUsage(
      deps.usage.query(usageQueryFrom(query, query.key_id === undefined ? null : [query.key_id], true)),
    ),
});

/** Each effective quota of a key (its tier's with its own applied), with what is used and left now. */
async function quotaStates(deps: GatewayDeps, key: KeyRecord, now: Date) {
  const tierQuotas = deps.config.tiers[key.tier].quotas;
  const own = key.quotas ?? {};
  const effective = new Map<Meter, { quota: Quota; source: 'tier' | 'key' }>();
  for (const [meter, quota] of Object.entries(tierQuotas) as [Meter, Quota][]) {
    effective.set(meter, { quota, source: 'tier' });
  }
  for (const [meter, quota] of Object.entries(own) as [Meter, Quota | null][]) {
    if (quota === null) effective.delete(meter);
    else effective.set(meter, { quota, source: 'key' });
  }
  return Promise.all(
    [...effective].map(async ([meter, { quota, source }]) => {
      const { settled, reserved } = await readUsage(deps.usage.used(key.id, meter, quota.period, now));
      const bounds = periodBounds(quota.period, now);
      return {
        meter,
        limit: quota.limit,
        period: quota.period,
        source,
        used: settled,
        reserved,
        remaining: Math.max(0, quota.limit - settled - reserved),
        period_start: bounds.start.toISOString(),
        period_end: bounds.end.toISOString(),
      };
    }),
  );
}

export const keyQuotasRoute = route({
  method: 'get',
  path: '/admin/api/keys/{id}/quotas',
  operationId: 'getKeyQuotas',
  ...adminSurface,
  summary: "A key's quotas and what is left",
  description:
    "The key's effective quotas (its tier's, with its own `quotas` applied) in the current UTC period.",
  params: KeyPath,
  responses: { 200: { description: 'The quotas.', content: json(KeyQuotaStateList) } },
  errors: [...keyStoreErrors, 'not_found'],
  async handle({ req, deps }) {
    // Read from the store itself (not_found for an unknown id), so an edit elsewhere shows at once.
    const key = await deps.keys.get(String(req.params.id));
    return { data: await quotaStates(deps, key, new Date()) };
  },
});

export const usageAdminRoutes = [adminUsageRoute, keyQuotasRoute];
