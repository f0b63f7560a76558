/**
 * What runs the gateway and reads about it, with no authentication: the probes (ops/health-routes.ts),
 * this document and its web page (ops/public-docs.ts).
 */
import { z } from 'zod';

export const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

export const Readiness = z
  .object({
    status: z.enum(['ready', 'degraded', 'unavailable']),
    checks: z.object({ key_store: z.string().optional(), rate_limit_store: z.string().optional() }),
  })
  .meta({ id: 'Readiness' });

export const tag = 'Operations';
