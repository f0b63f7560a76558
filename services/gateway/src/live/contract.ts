/** The live-view calls' bodies (§6b), as the routes validate them and the document shows them. */
import { z } from 'zod';
import { LIVE_TTL_MAX_S, LIVE_TTL_MIN_S } from './link-store.js';

export const LiveMode = z.enum(['view', 'interact']).meta({
  id: 'LiveMode',
  description:
    '`view`: the picture only. `interact`: the viewer may also click, type and scroll in the page.',
});

export const CreateLiveLinkRequest = z
  .object({
    mode: LiveMode.default('view'),
    ttl_s: z
      .number()
      .int()
      .min(LIVE_TTL_MIN_S)
      .max(LIVE_TTL_MAX_S)
      .default(3600)
      .meta({ description: 'Seconds the link works for (60–86400, default 3600).' }),
  })
  .meta({ id: 'CreateLiveLinkRequest' });

export const LiveLinkCreated = z
  .object({
    live_id: z.uuid().meta({ description: 'Names the link, to revoke it.' }),
    url: z.string().meta({
      description:
        '`<base>/live/<token>`: a page anyone holding it can open without a key. The token (≥ 128 random bits) is shown only here; the gateway keeps only its hash.',
    }),
    mode: LiveMode,
    expires_at: z.iso.datetime().meta({ description: 'ISO 8601, UTC (`Z`).' }),
  })
  .meta({ id: 'LiveLinkCreated' });
