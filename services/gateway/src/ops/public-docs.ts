import { randomBytes } from 'node:crypto';
import type { Response, Router } from 'express';
import { exactRouter } from '../http/router.js';
import { docsPage } from '../openapi/docs-page.js';
import { openApiDocument } from '../openapi/document.js';

/** Sends a self-contained page whose only scripts and styles carry this response's nonce. */
export function sendPage(res: Response, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
  );
  res.type('html').send(render(nonce));
}

/** /openapi.json and /docs: public (no key), like the probes. */
export function publicDocsRouter(): Router {
  const router = exactRouter();
  const body = JSON.stringify(openApiDocument);
  router.get('/openapi.json', (_req, res) => {
    res.type('json').send(body);
  });
  router.get('/docs', (_req, res) => sendPage(res, docsPage));
  return router;
}
