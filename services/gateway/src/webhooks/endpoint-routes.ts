import { SwitchboardError } from '@switchboard/errors';
import { MAX_ENDPOINTS_PER_KEY, parseEventFilter } from '@switchboard/webhooks';
import type { Response } from 'express';
import { json, jsonBodyErrors } from '../contract/responses.js';
import {
  CreatedWebhookEndpoint,
  CreateWebhookRequest,
  RotatedWebhookSecret,
  RotateWebhookSecretRequest,
  UpdateWebhookRequest,
  WebhookEndpoint,
  WebhookEndpointList,
  webhookErrors,
  WebhookPath,
  webhooksSurface,
} from '../contract/webhooks.js';
import { route } from '../http/route.js';
import { webhooksOf } from './gateway-webhooks.js';
import { endpointNotFound, storeCall } from './store-call.js';
import { endpointView } from './views.js';

/** The calling key's id: every store call is scoped by it, so another key's endpoint reads as absent. */
export function callerKeyId(res: Response): string {
  const key = res.locals.ctx.key;
  if (!key) throw new Error('An API-key route ran without a key.');
  return key.id;
}

const found = <T>(value: T | null): T => {
  if (value === null) throw endpointNotFound();
  return value;
};

export const createWebhookRoute = route({
  method: 'post',
  path: '/webhooks',
  operationId: 'createWebhook',
  ...webhooksSurface,
  summary: 'Register a webhook endpoint',
  description: `The URL is checked now by the address guard (\`400 url_not_allowed\`); a key has at most ${MAX_ENDPOINTS_PER_KEY} endpoints (\`400 invalid_request\` for more). The signing secret is in this answer only.`,
  body: CreateWebhookRequest,
  responses: {
    201: {
      description: 'The endpoint, with its signing secret (`secret`) shown only this once.',
      content: json(CreatedWebhookEndpoint),
    },
  },
  errors: [...webhookErrors, ...jsonBodyErrors, 'url_not_allowed'],
  async handle({ body, res, deps }) {
    const { store, targets } = webhooksOf(deps);
    const url = await targets.check(body.url);
    const created = await storeCall(
      store.createEndpoint(callerKeyId(res), {
        url,
        events: parseEventFilter(body.events),
        description: body.description ?? null,
      }),
    );
    if (created === 'limit') {
      throw new SwitchboardError('invalid_request', {
        message: `A key may have at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints.`,
      });
    }
    return { ...endpointView(created.endpoint), secret: created.secret };
  },
});

export const listWebhooksRoute = route({
  method: 'get',
  path: '/webhooks',
  operationId: 'listWebhooks',
  ...webhooksSurface,
  summary: "The key's webhook endpoints",
  responses: {
    200: { description: 'Every endpoint of the key, without secrets.', content: json(WebhookEndpointList) },
  },
  errors: webhookErrors,
  async handle({ res, deps }) {
    const endpoints = await storeCall(webhooksOf(deps).store.listEndpoints(callerKeyId(res)));
    return { data: endpoints.map(endpointView) };
  },
});

export const getWebhookRoute = route({
  method: 'get',
  path: '/webhooks/{id}',
  operationId: 'getWebhook',
  ...webhooksSurface,
  summary: 'A webhook endpoint',
  params: WebhookPath,
  responses: { 200: { description: 'The endpoint, without its secret.', content: json(WebhookEndpoint) } },
  errors: [...webhookErrors, 'not_found'],
  async handle({ req, res, deps }) {
    const endpoint = await storeCall(
      webhooksOf(deps).store.getEndpoint(callerKeyId(res), String(req.params.id)),
    );
    return endpointView(found(endpoint));
  },
});

export const updateWebhookRoute = route({
  method: 'patch',
  path: '/webhooks/{id}',
  operationId: 'updateWebhook',
  ...webhooksSurface,
  summary: 'Edit a webhook endpoint',
  description:
    'A new URL is checked as at registration. `status: "disabled"` stops deliveries (pending ones wait); `"enabled"` resumes them.',
  params: WebhookPath,
  body: UpdateWebhookRequest,
  responses: { 200: { description: 'The endpoint.', content: json(WebhookEndpoint) } },
  errors: [...webhookErrors, ...jsonBodyErrors, 'url_not_allowed', 'not_found'],
  async handle({ req, res, body, deps }) {
    const { store, targets } = webhooksOf(deps);
    const keyId = callerKeyId(res);
    const id = String(req.params.id);
    // An unknown id is 404 before a URL is resolved: the answer must not depend on someone else's DNS.
    found(await storeCall(store.getEndpoint(keyId, id)));
    const url = body.url === undefined ? undefined : await targets.check(body.url);
    const endpoint = await storeCall(
      store.updateEndpoint(keyId, id, {
        ...(url === undefined ? {} : { url }),
        ...(body.events === undefined ? {} : { events: parseEventFilter(body.events) }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.status === undefined ? {} : { status: body.status }),
      }),
    );
    return endpointView(found(endpoint));
  },
});

export const deleteWebhookRoute = route({
  method: 'delete',
  path: '/webhooks/{id}',
  operationId: 'deleteWebhook',
  ...webhooksSurface,
  summary: 'Delete a webhook endpoint',
  description: 'Nothing more is delivered to it; its delivery log goes with it.',
  params: WebhookPath,
  responses: { 204: { description: 'Deleted.' } },
  errors: [...webhookErrors, 'not_found'],
  async serve({ req, res, deps }) {
    const deleted = await storeCall(
      webhooksOf(deps).store.deleteEndpoint(callerKeyId(res), String(req.params.id)),
    );
    if (!deleted) throw endpointNotFound();
    res.status(204).end();
  },
});

export const rotateWebhookSecretRoute = route({
  method: 'post',
  path: '/webhooks/{id}/rotate-secret',
  operationId: 'rotateWebhookSecret',
  ...webhooksSurface,
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    'Deliveries are signed with the new secret from now on, and with the old one too (two `v1,` signatures) for `grace_seconds`.',
  params: WebhookPath,
  body: RotateWebhookSecretRequest,
  // Left out, grace_seconds is 86400.
  bodyOptional: true,
  responses: {
    200: { description: 'The new secret, shown only this once.', content: json(RotatedWebhookSecret) },
  },
  errors: [...webhookErrors, ...jsonBodyErrors, 'not_found'],
  async handle({ req, res, body, deps }) {
    const rotated = await storeCall(
      webhooksOf(deps).store.rotateSecret(callerKeyId(res), String(req.params.id), body.grace_seconds),
    );
    return found(rotated);
  },
});
