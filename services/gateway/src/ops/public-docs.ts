import { z } from 'zod';
import {
  asset,
  contentSecurityPolicy,
  dependencyFile,
  page,
  publicFile,
  staticFileRoute,
} from '../http/static-files.js';
import { tag } from '../contract/operations.js';
import { json } from '../contract/responses.js';
import { route } from '../http/route.js';

/**
 * What Scalar's API reference needs, and nothing more. Its bundle and our page's start-up script
 * are same-origin files ('self'). It injects its own style sheet and sets style attributes at run
 * time, which no nonce or hash can cover — hence 'unsafe-inline' for styles only (styles cannot run
 * code). It fetches /openapi.json and, from its "test request" client, this gateway itself
 * (connect-src 'self'); with the default fonts off it loads no font, and its icons are inline SVG
 * or data: URLs.
 */
const docsPolicy = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self' 'unsafe-inline'",
  'connect-src': "'self'",
  'img-src': "'self' data:",
  'font-src': "'self' data:",
});

export const openapiRoute = route({
  method: 'get',
  path: '/openapi.json',
  operationId: 'openapi',
  tag,
  auth: 'public',
  summary: 'This OpenAPI 3.1 document',
  responses: { 200: { description: 'The document.', content: json(z.looseObject({})) } },
  errors: [],
  serve({ res, deps }) {
    res.type('json').send(deps.openApiJson);
  },
});

/**
 * /openapi.json and /docs: public (no key), like the probes. /docs is Scalar's API reference
 * (@scalar/api-reference's standalone browser bundle, served from node_modules) reading
 * /openapi.json, configured by public/docs/docs.js to make no request beyond this gateway; its
 * scripts are served from this gateway so the page needs nothing else.
 */
export const publicDocsRoutes = [
  openapiRoute,
  staticFileRoute({
    path: '/docs',
    operationId: 'docs',
    tag,
    kind: 'page',
    summary: 'This documentation (web page)',
    description: 'Rendered from `/openapi.json`.',
    serves: page(publicFile('docs/index.html'), docsPolicy),
  }),
  staticFileRoute({
    path: '/docs/docs.js',
    operationId: 'docsScript',
    tag,
    kind: 'script',
    summary: 'The script that starts the documentation page',
    serves: asset(publicFile('docs/docs.js')),
  }),
  staticFileRoute({
    path: '/docs/scalar.js',
    operationId: 'docsScalarBundle',
    tag,
    kind: 'script',
    summary: "Scalar's API reference (its browser bundle)",
    serves: asset(dependencyFile('@scalar/api-reference/browser/standalone.js')),
  }),
];
