import type { Router } from 'express';
import type { KeyStore } from '@switchboard/keys';
import { z } from 'zod';
import { exactRouter } from '../http/router.js';
import { tiers } from '@switchboard/keys';
import { isCidr } from '@switchboard/config';
import { jsonBody } from '../http/json-body.js';
import { validate } from '../http/validate.js';
import type { EventPublisher } from '@switchboard/events';

const cidrs = z.array(z.string().refine(isCidr, 'expected an IPv4 or IPv6 CIDR')).max(100);
const rateLimit = z.number().int().positive().max(1_000_000_000).nullable();

const createBody = z.object({
  name: z.string().trim().min(1).max(100),
  tier: z.enum(tiers),
  ip_allowlist: cidrs.optional(),
  rate_limit_per_minute: rateLimit.optional(),
});

const patchBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  tier: z.enum(tiers).optional(),
  ip_allowlist: cidrs.optional(),
  rate_limit_per_minute: rateLimit.optional(),
});

const rotateBody = z.object({
  grace_seconds: z.number().int().min(0).max(86_400).default(0),
});

/** The admin API of API.md §7. Secrets appear in exactly two responses: create and rotate. */
export function keysRouter(keys: KeyStore, events: EventPublisher, bodyLimitBytes: number): Router {
  const router = exactRouter();
  const body = jsonBody(bodyLimitBytes);

  router.post('/keys', body, async (req, res) => {
    const input = validate(createBody, req.body);
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
    const patch = validate(patchBody, req.body);
    res.json(keys.publicView(await keys.update(String(req.params.id), patch)));
  });

  router.post('/keys/:id/rotate', body, async (req, res) => {
    const { grace_seconds } = validate(rotateBody, req.body);
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
