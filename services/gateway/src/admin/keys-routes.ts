import type { Router } from 'express';
import type { KeyStore } from '@switchboard/keys';
import { exactRouter } from '../http/router.js';
import { jsonBody } from '../http/json-body.js';
import { validate } from '../http/validate.js';
import { CreateKeyRequest, RotateKeyRequest, UpdateKeyRequest } from '../contract/administration.js';
import type { EventPublisher } from '@switchboard/events';

/** The admin API of API.md §7. Secrets appear in exactly two responses: create and rotate. */
export function keysRouter(keys: KeyStore, events: EventPublisher, bodyLimitBytes: number): Router {
  const router = exactRouter();
  const body = jsonBody(bodyLimitBytes);

  router.post('/keys', body, async (req, res) => {
    const input = validate(CreateKeyRequest, req.body);
    const { record, key } = await keys.create(input);
    events.publish('keys.created', { key_id: record.id, tier: record.tier });
    res.status(201).json({ ...keys.publicView(record), key });
  });

  router.get('/keys', async (_req, res) => {
    res.json({ data: await keys.list() });
  });

  router.get('/keys/:id', async (req, res) => {
    res.json(keys.publicView(await keys.get(String(req.params.id))));
  });

  router.patch('/keys/:id', body, async (req, res) => {
    const patch = validate(UpdateKeyRequest, req.body);
    res.json(keys.publicView(await keys.update(String(req.params.id), patch)));
  });

  router.post('/keys/:id/rotate', body, async (req, res) => {
    const { grace_seconds } = validate(RotateKeyRequest, req.body);
    const { record, key } = await keys.rotate(String(req.params.id), grace_seconds);
    events.publish('keys.rotated', { key_id: record.id, grace_seconds });
    res.json({ id: record.id, key });
  });

  router.delete('/keys/:id', async (req, res) => {
    await keys.revoke(String(req.params.id));
    events.publish('keys.revoked', { key_id: String(req.params.id) });
    res.status(204).end();
  });

  return router;
}
