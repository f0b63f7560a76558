import { usageSurface, UsageQuery, UsageReport } from '../contract/usage.js';
import { json, keyErrors } from '../contract/responses.js';
import { route } from '../http/route.js';
import { usageQueryFrom } from '../usage/query-params.js';
import { readUsage } from '../usage/store-unavailable.js';

/** A key's own usage: the key id comes from the authenticated key, never from the caller. */
export const getUsageRoute = route({
  method: 'get',
  path: '/usage',
  operationId: 'getUsage',
  ...usageSurface,
  summary: "The key's own usage",
  description:
    'Sums per bucket (UTC edges, empty buckets included), split by meter and by `group_by`. Recorded usage shows here within 5 s.',
  query: UsageQuery,
  responses: { 200: { description: 'The usage.', content: json(UsageReport) } },
  errors: [...keyErrors, 'invalid_request', 'unavailable'],
  async handle({ query, res, deps }) {
    const key = res.locals.ctx.key;
    if (!key) throw new Error('An API-key route ran without a key.');
    return readUsage(deps.usage.query(usageQueryFrom(query, [key.id], false)));
  },
});
