import { SwitchboardError } from '@switchboard/errors';
import { json } from '../contract/responses.js';
import {
  DeliveryPath,
  DeliveryQuery,
  WebhookDeliveryPage,
  webhookErrors,
  WebhookPath,
  webhooksSurface,
  WebhookTestQueued,
} from '../contract/webhooks.js';
import { route } from '../http/route.js';
import { callerKeyId } from './endpoint-routes.js';
import { webhooksOf } from './gateway-webhooks.js';
import { endpointNotFound, storeCall } from './store-call.js';
import { deliveryView } from './views.js';

export const testWebhookRoute = route({
  method: 'post',
  path: '/webhooks/{id}/test',
  operationId: 'testWebhook',
  ...webhooksSurface,
  summary: 'Send a test event to a webhook endpoint',
  description:
    'Queues a `webhook.test` event for this endpoint only, delivered, signed and retried like any other (an enabled endpoint only).',
  params: WebhookPath,
  responses: { 202: { description: 'Queued.', content: json(WebhookTestQueued) } },
  errors: [...webhookErrors, 'not_found'],
  async handle({ req, res, deps }) {
    const eventId = await storeCall(
      webhooksOf(deps).store.enqueueTest(callerKeyId(res), String(req.params.id)),
    );
    if (eventId === null) throw endpointNotFound();
    return { event_id: eventId };
  },
});

export const listDeliveriesRoute = route({
  method: 'get',
  path: '/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  ...webhooksSurface,
  summary: "A webhook endpoint's delivery log",
  description: 'Newest first, kept 30 days; `after` pages on.',
  params: WebhookPath,
  query: DeliveryQuery,
  responses: { 200: { description: 'The deliveries.', content: json(WebhookDeliveryPage) } },
  errors: [...webhookErrors, 'invalid_request', 'not_found'],
  async handle({ req, res, query, deps }) {
    const page = await storeCall(
      webhooksOf(deps).store.listDeliveries(callerKeyId(res), String(req.params.id), {
        ...(query.status === undefined ? {} : { status: query.status }),
        limit: query.limit,
        ...(query.after === undefined ? {} : { after: query.after }),
      }),
    );
    if (page === null) throw endpointNotFound();
    return { data: page.data.map(deliveryView), has_more: page.has_more };
  },
});

export const redeliverRoute = route({
  method: 'post',
  path: '/webhooks/{id}/deliveries/{delivery_id}/redeliver',
  operationId: 'redeliverWebhook',
  ...webhooksSurface,
  summary: 'Deliver an event again',
  description:
    'The delivery goes back to `pending` and is attempted at once: the same event, body and `webhook-id`, with a new timestamp and signature.',
  params: DeliveryPath,
  responses: { 202: { description: 'Queued again.' } },
  errors: [...webhookErrors, 'not_found'],
  async serve({ req, res, deps }) {
    const queued = await storeCall(
      webhooksOf(deps).store.redeliver(
        callerKeyId(res),
        String(req.params.id),
        String(req.params.delivery_id),
      ),
    );
    if (!queued)
      throw new SwitchboardError('not_found', { message: 'No such webhook endpoint or delivery.' });
    res.status(202).end();
  },
});
