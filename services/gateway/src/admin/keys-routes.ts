import {
  ApiKey,
  ApiKeyList,
  CreatedKey,
  CreateKeyRequest,
  KeyPath,
  keyStoreErrors,
  RotatedKey,
  RotateKeyRequest,
  adminSurface,
  UpdateKeyRequest,
} from '../contract/administration.js';
import { json, jsonBodyErrors } from '../contract/responses.js';
import { route } from '../http/route.js';

export const createKeyRoute = route({
  method: 'post',
  path: '/admin/api/keys',
  operationId: 'createKey',
  ...adminSurface,
  summary: 'Create an API key',
  body: CreateKeyRequest,
  responses: {
    201: { description: 'The key, with its secret (`key`) shown only this once.', content: json(CreatedKey) },
  },
  errors: [...keyStoreErrors, ...jsonBodyErrors],
  async handle({ body, deps }) {
    const { record, key } = await deps.keys.create(body);
    deps.events.publish('keys.created', { key_id: record.id, tier: record.tier });
    return { ...deps.keys.publicView(record), key };
  },
});

export const listKeysRoute = route({
  method: 'get',
  path: '/admin/api/keys',
  operationId: 'listKeys',
  ...adminSurface,
  summary: 'List API keys',
  responses: { 200: { description: 'Every key, without secrets.', content: json(ApiKeyList) } },
  errors: keyStoreErrors,
  handle: async ({ deps }) => ({ data: await deps.keys.list() }),
});

export const getKeyRoute = route({
  method: 'get',
  path: '/admin/api/keys/{id}',
  operationId: 'getKey',
  ...adminSurface,
  summary: 'Get an API key',
  description: 'Read from the key store itself, so a change made through another gateway shows at once.',
  params: KeyPath,
  responses: { 200: { description: 'The key, without its secret.', content: json(ApiKey) } },
  errors: [...keyStoreErrors, 'not_found'],
  handle: async ({ req, deps }) => deps.keys.publicView(await deps.keys.get(String(req.params.id))),
});

export const updateKeyRoute = route({
  method: 'patch',
  path: '/admin/api/keys/{id}',
  operationId: 'updateKey',
  ...adminSurface,
  summary: 'Edit an API key',
  params: KeyPath,
  body: UpdateKeyRequest,
  responses: { 200: { description: 'The key.', content: json(ApiKey) } },
  errors: [...keyStoreErrors, ...jsonBodyErrors, 'not_found'],
  handle: async ({ req, body, deps }) =>
    deps.keys.publicView(await deps.keys.update(String(req.params.id), body)),
});

export const revokeKeyRoute = route({
  method: 'delete',
  path: '/admin/api/keys/{id}',
  operationId: 'revokeKey',
  ...adminSurface,
  summary: 'Revoke an API key',
  description: 'The key is refused everywhere within 2 s.',
  params: KeyPath,
  responses: { 204: { description: 'Revoked.' } },
  errors: [...keyStoreErrors, 'not_found'],
  async serve({ req, res, deps }) {
    await deps.keys.revoke(String(req.params.id));
    deps.events.publish('keys.revoked', { key_id: String(req.params.id) });
    res.status(204).end();
  },
});

export const rotateKeyRoute = route({
  method: 'post',
  path: '/admin/api/keys/{id}/rotate',
  operationId: 'rotateKey',
  ...adminSurface,
  summary: 'Rotate the secret of an API key',
  description:
    'The new secret works at once; the old one stops after `grace_seconds`. The key id (and so session ownership) stays. A revoked key cannot be rotated (`400 invalid_request`).',
  params: KeyPath,
  body: RotateKeyRequest,
  // Left out, grace_seconds is 0.
  bodyOptional: true,
  responses: { 200: { description: 'The new key, shown only this once.', content: json(RotatedKey) } },
  errors: [...keyStoreErrors, ...jsonBodyErrors, 'not_found'],
  async handle({ req, body, deps }) {
    const { grace_seconds } = body;
    const { record, key } = await deps.keys.rotate(String(req.params.id), grace_seconds);
    deps.events.publish('keys.rotated', { key_id: record.id, grace_seconds });
    return { id: record.id, key };
  },
});

/** Key administration. Secrets appear in exactly two responses: create and rotate. */
export const keysRoutes = [
  createKeyRoute,
  listKeysRoute,
  getKeyRoute,
  updateKeyRoute,
  revokeKeyRoute,
  rotateKeyRoute,
];
