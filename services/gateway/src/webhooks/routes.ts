import {
  createWebhookRoute,
  deleteWebhookRoute,
  getWebhookRoute,
  listWebhooksRoute,
  rotateWebhookSecretRoute,
  updateWebhookRoute,
} from './endpoint-routes.js';
import { listDeliveriesRoute, redeliverRoute, testWebhookRoute } from './delivery-routes.js';

/** `/webhooks`: a key's own endpoints and their delivery logs, in the document's order. */
export const webhookRoutes = [
  createWebhookRoute,
  listWebhooksRoute,
  getWebhookRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  rotateWebhookSecretRoute,
  testWebhookRoute,
  listDeliveriesRoute,
  redeliverRoute,
];
