/**
 * What runs the gateway and reads about it, with no authentication: the probes (ops/health-routes.ts),
 * this document and its web page (ops/public-docs.ts).
 */
import { z } from 'zod';
import { declareRoute } from './registry.js';
import { json, staticFileRefusals } from './responses.js';

const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

const Readiness = z
  .object({
    status: z.enum(['ready', 'degraded', 'unavailable']),
    checks: z.object({ key_store: z.string().optional(), rate_limit_store: z.string().optional() }),
  })
  .meta({ id: 'Readiness' });

const tag = 'Operations';
const html = { 'text/html; charset=utf-8': { schema: z.string() } };

declareRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'healthz',
  tag,
  auth: 'public',
  summary: 'Liveness',
  description: 'Checks no dependency.',
  responses: { 200: { description: 'The process is alive.', content: json(Health) } },
  errors: [],
});

declareRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readyz',
  tag,
  auth: 'public',
  summary: 'Readiness',
  description:
    'Ready when the key store and the rate-limit store are reachable; a lost rate-limit store is reported as `degraded`.',
  responses: {
    200: { description: 'Ready (or degraded).', content: json(Readiness) },
    // Probes read the status, people the checks: not an error body.
    503: { description: 'Not ready: the key store is unreachable.', content: json(Readiness) },
  },
  errors: [],
});

declareRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'openapi',
  tag,
  auth: 'public',
  summary: 'This OpenAPI 3.1 document',
  responses: { 200: { description: 'The document.', content: json(z.looseObject({})) } },
  errors: [],
});

declareRoute({
  method: 'get',
  path: '/docs',
  operationId: 'docs',
  tag,
  auth: 'public',
  summary: 'This documentation (web page)',
  responses: {
    200: { description: 'The page, rendered from `/openapi.json`.', content: html },
    ...staticFileRefusals(),
  },
  errors: [],
});

/** The scripts the /docs page loads, served from this gateway so the page needs nothing else. */
const docsScripts = [
  { file: 'docs.js', operationId: 'docsScript', summary: 'The script that starts the documentation page' },
  {
    file: 'scalar.js',
    operationId: 'docsScalarBundle',
    summary: "Scalar's API reference (its browser bundle)",
  },
];
for (const { file, operationId, summary } of docsScripts) {
  declareRoute({
    method: 'get',
    path: `/docs/${file}`,
    operationId,
    tag,
    auth: 'public',
    summary,
    responses: {
      200: { description: 'The script.', content: { 'text/javascript': { schema: z.string() } } },
      ...staticFileRefusals(),
    },
    errors: [],
  });
}
