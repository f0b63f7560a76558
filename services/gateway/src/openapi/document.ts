/**
 * The OpenAPI 3.1 document the gateway serves at /openapi.json (API.md §8): every call of
 * API.md, written by hand. Shared pieces live in components.ts; each area's paths and schemas in
 * its own paths-*.ts file.
 */
import { deepFreeze } from '@switchboard/config';
import { sharedComponents, security, type Paths, type Schemas } from './components.js';
import { adminPaths, adminSchemas } from './paths-admin.js';
import { animatePaths, animateSchemas } from './paths-animate.js';
import { browserPaths, browserSchemas } from './paths-browser.js';
import { modelPaths, modelSchemas } from './paths-models.js';

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers: readonly { readonly url: string; readonly description?: string }[];
  readonly security: typeof security.apiKey;
  readonly tags: readonly { readonly name: string; readonly description: string }[];
  readonly paths: Paths;
  readonly components: typeof sharedComponents & { readonly schemas: Schemas };
}

const description = `GPU models and headless browsers behind one HTTP API.

Authentication: every call needs \`Authorization: Bearer <api_key>\`, except /healthz, /readyz, /openapi.json, /docs and the /admin page. Admin calls (/admin/api/...) use the admin token instead.

IP allowlists: the cluster list (IP_ALLOWLIST) is checked before the key, then the key's own list; both are CIDR lists, empty = everyone. A refused address gets 403 ip_not_allowed.

Tiers: basic < professional < enterprise. Defaults — requests/minute 60 / 600 / 6000; browser sessions at once 2 / 10 / 50; upload limit 25 MB / 100 MB / 500 MB; animation jobs at once 0 / 2 / 10. /animate needs professional or higher (403 tier_required).

Rate limits: per key, shared by every gateway replica. Every authenticated response carries RateLimit-Policy and RateLimit; over the limit → 429 rate_limited with Retry-After. 401/403 responses do not spend the key's quota; failed authentication is limited per client IP.

Request ids: every response has X-Request-Id (a well-formed incoming one is echoed).

Errors: every error body is {"error": {"code", "message", "request_id", "param"?}} with a stable code (schema ErrorCode). Unknown JSON fields are ignored; a known field of the wrong type or out of range is a 400 naming it in param. Bodies over the route's limit → 413; a JSON route sent another content type → 415.`;

const schemas: Schemas = {
  ...sharedComponents.schemas,
  ...modelSchemas,
  ...animateSchemas,
  ...browserSchemas,
  ...adminSchemas,
};

export const openApiDocument: OpenApiDocument = deepFreeze({
  openapi: '3.1.0',
  info: { title: 'Switchboard API', version: '1.0.0', description },
  servers: [{ url: '/', description: 'This gateway (local default http://127.0.0.1:8080).' }],
  security: security.apiKey,
  // Section numbers of the contract stay out of the served document: readers have only this.
  tags: [
    { name: 'Language model', description: 'Completions, streamed or not, and the list of models.' },
    { name: 'Transcription', description: 'Speech to text, as text, SRT, WebVTT or JSON.' },
    { name: 'Images', description: 'Image generation; images live in the shared object store.' },
    {
      name: 'Animation',
      description:
        'Image (and a driving video, audio or text) to video, as jobs that survive restarts and run when a worker is free. Professional tier or higher. Jobs, their inputs and their videos belong to the key that submitted them.',
    },
    {
      name: 'Browser sessions',
      description: 'Each session is its own Chromium process, owned by the key id that created it.',
    },
    {
      name: 'Administration',
      description: "API keys, every key's animation jobs and the cluster status, with the admin token.",
    },
    { name: 'Operations', description: 'Probes and this documentation. No authentication.' },
  ],
  paths: { ...modelPaths, ...animatePaths, ...browserPaths, ...adminPaths },
  components: { ...sharedComponents, schemas },
});

function errorCodeEnum(document: OpenApiDocument): string[] {
  const values = document.components.schemas['ErrorCode']?.['enum'];
  if (!Array.isArray(values) || !values.every((value): value is string => typeof value === 'string')) {
    throw new Error('the OpenAPI document has no ErrorCode enum');
  }
  return [...values];
}

/** Every error code the document names (the ErrorCode enum, API.md §1). */
export const documentedErrorCodes: readonly string[] = Object.freeze(errorCodeEnum(openApiDocument));
