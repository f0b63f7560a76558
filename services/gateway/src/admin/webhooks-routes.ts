import { adminSurface, KeyPath, keyStoreErrors } from '../contract/administration.js';
import { json } from '../contract/responses.js';
import { KeyWebhooks } from '../contract/webhooks.js';
import { route } from '../http/route.js';
import { webhooksOf } from '../webhooks/gateway-webhooks.js';
import { storeCall } from '../webhooks/store-call.js';
import { deliveryView, endpointView } from '../webhooks/views.js';

/** What the dashboard shows of each endpoint: enough to see that deliveries flow, or why not. */
const RECENT_DELIVERIES = 10;

export const keyWebhooksRoute = route({
  method: 'get',
  path: '/admin/api/keys/{id}/webhooks',
  operationId: 'getKeyWebhooks',
  ...adminSurface,
  summary: "A key's webhook endpoints and their latest deliveries",
  description: `Each endpoint of the key (never its secret) with its ${RECENT_DELIVERIES} most recent deliveries.`,
  params: KeyPath,
  responses: { 200: { description: 'The endpoints.', content: json(KeyWebhooks) } },
  errors: [...keyStoreErrors, 'not_found'],
  async handle({ req, deps }) {
    // not_found for an unknown key, as the key's other admin calls answer.
    const key = await deps.keys.get(String(req.params.id));
    const { store } = webhooksOf(deps);
    const endpoints = await storeCall(store.listEndpoints(key.id));
    const data = await Promise.all(
      endpoints.map(async (endpoint) => {
        const page = await storeCall(store.listDeliveries(key.id, endpoint.id, { limit: RECENT_DELIVERIES }));
        return { ...endpointView(endpoint), recent_deliveries: (page?.data ?? []).map(deliveryView) };
      }),
    );
    return { data };
  },
});
