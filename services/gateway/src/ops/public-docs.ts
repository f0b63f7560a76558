import type { Router } from 'express';
import { exactRouter } from '../http/router.js';
import { asset, contentSecurityPolicy, dependencyFile, page, publicFile } from '../http/static-files.js';
import { openApiDocument } from '../contract/document.js';

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

/**
 * /openapi.json and /docs: public (no key), like the probes. /docs is Scalar's API reference
 * (@scalar/api-reference's standalone browser bundle, served from node_modules) reading
 * /openapi.json, configured by public/docs/docs.js to make no request beyond this gateway.
 */
export function publicDocsRouter(): Router {
  const router = exactRouter();
  const body = JSON.stringify(openApiDocument);
  router.get('/openapi.json', (_req, res) => {
    res.type('json').send(body);
  });
  router.get('/docs', page(publicFile('docs/index.html'), docsPolicy));
  router.get('/docs/docs.js', asset(publicFile('docs/docs.js')));
  router.get('/docs/scalar.js', asset(dependencyFile('@scalar/api-reference/browser/standalone.js')));
  return router;
}
