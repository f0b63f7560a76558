/**
 * The OpenAPI 3.1 document served at /openapi.json, generated from the route declarations of
 * this folder. Importing this module registers every route (each area's file declares its own).
 */
import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { deepFreeze } from '@switchboard/config';
// Each area's file declares its routes when imported; the order is the document's.
import { streamEventSchemas } from './language-model.js';
import './transcription.js';
import './images.js';
import './animation.js';
import './browser-sessions.js';
import { tierSummary } from './administration.js';
import './operations.js';
import { openAiStreamSchemas } from './openai.js';
import { registry } from './registry.js';
import { headers, securitySchemes } from './responses.js';

for (const [name, scheme] of Object.entries(securitySchemes))
  registry.registerComponent('securitySchemes', name, scheme);
for (const [name, header] of Object.entries(headers)) {
  registry.registerComponent(
    'headers',
    name,
    header as Parameters<typeof registry.registerComponent<'headers'>>[2],
  );
}

/** Schemas no operation names as a JSON body but readers need (the events of a stream). */
const documentedSchemas = [...streamEventSchemas, ...openAiStreamSchemas];

const description = `GPU models and headless browsers behind one HTTP API.

Authentication: every call needs \`Authorization: Bearer <api_key>\`, except /healthz, /readyz, /openapi.json, /docs and the /admin page. Admin calls (/admin/api/...) use the admin token instead.

IP allowlists: the cluster list (IP_ALLOWLIST) is checked before the key, then the key's own list; both are CIDR lists, empty = everyone. A refused address gets 403 ip_not_allowed.

Tiers: ${tierSummary} /animate needs professional or higher (403 tier_required).

Rate limits: per key, shared by every gateway replica. Every authenticated response carries RateLimit-Policy and RateLimit; over the limit → 429 rate_limited with Retry-After. 401/403 responses do not spend the key's quota; failed authentication is limited per client IP.

Request ids: every response has X-Request-Id (a well-formed incoming one is echoed).

Errors: every error body is {"error": {"code", "message", "request_id", "param"?}} with a stable code (schema ErrorCode). Unknown JSON fields are ignored; a known field of the wrong type or out of range is a 400 naming it in param. Bodies over the route's limit → 413; a JSON route sent another content type → 415.`;

const generated: unknown = new OpenApiGeneratorV31([
  ...registry.definitions,
  ...documentedSchemas.map((schema) => ({ type: 'schema' as const, schema })),
]).generateDocument({
  openapi: '3.1.0',
  info: { title: 'Switchboard API', version: '1.0.0', description },
  servers: [{ url: '/', description: 'This gateway (local default http://127.0.0.1:8080).' }],
  security: [{ apiKey: [] }],
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
    {
      name: 'OpenAI-compatible',
      description:
        "OpenAI's request, response, stream and error shapes under /v1, for OpenAI's own client libraries pointed at this gateway (`baseURL: <gateway>/v1`): the same keys, IP allowlists, tiers, rate limits and request ids as the rest of the API. Errors are `{\"error\": {message, type, param, code}}` with this API's statuses and stable codes; 429 and 503 keep `Retry-After`.",
    },
  ],
});

/** The parts of the document the gateway and its tests read; the rest is plain OpenAPI 3.1. */
export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, OpenApiOperation>>>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    readonly [section: string]: unknown;
  };
  readonly [field: string]: unknown;
}

export interface OpenApiOperation {
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly security: readonly Readonly<Record<string, readonly string[]>>[];
  readonly responses: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly [field: string]: unknown;
}

/** Plain JSON (no zod objects or undefined values left), frozen: served as is and read by tests. */
export const openApiDocument: OpenApiDocument = deepFreeze(
  JSON.parse(JSON.stringify(generated)) as OpenApiDocument,
);
