/**
 * The OpenAPI 3.1 document served at /openapi.json, generated from the route declarations the
 * gateway serves (route-catalogue.ts).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { deepFreeze } from '@switchboard/config';
import type { ErrorCode } from '@switchboard/errors';
import { isZodType, type Route } from '../http/route.js';
import { allRoutes } from '../route-catalogue.js';
import { tierSummary } from './administration.js';
import { streamEventSchemas } from './language-model.js';
import { openAiStreamSchemas } from './openai.js';
import { errorResponses, headers, responseHeaders, securitySchemes } from './responses.js';

const registry = new OpenAPIRegistry();

/** A route declaration as an OpenAPI operation; the gates' refusals are added from its policy. */
function registerRoute(route: Route): void {
  const errors: readonly ErrorCode[] = [
    ...route.errors,
    ...(route.tier === undefined ? [] : (['tier_required'] as const)),
    ...(route.modelCalls === undefined ? [] : (['concurrency_limit'] as const)),
    // A path parameter that is not valid percent-encoded UTF-8 is refused before the handler.
    ...(route.path.includes('{') ? (['invalid_request'] as const) : []),
  ];
  const tierNote =
    route.tier && `Needs a key of the \`${route.tier}\` tier or higher (\`403 tier_required\`).`;
  const description = [route.description, tierNote].filter(Boolean).join(' ') || undefined;
  const body =
    route.body === undefined
      ? undefined
      : isZodType(route.body)
        ? { required: !route.bodyOptional, content: { 'application/json': { schema: route.body } } }
        : { required: route.body.required ?? true, ...route.body };
  const successes = Object.fromEntries(
    Object.entries(route.responses).map(([status, { gatewayHeaders, ...response }]) => [
      status,
      gatewayHeaders === false
        ? response
        : { ...response, headers: { ...responseHeaders(route.auth, true), ...response.headers } },
    ]),
  );
  registry.registerPath({
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    ...(description === undefined ? {} : { description }),
    tags: [route.tag],
    security: route.auth === 'public' ? [] : route.auth === 'admin' ? [{ adminToken: [] }] : [{ apiKey: [] }],
    request: {
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
      ...(route.headers ? { headers: route.headers } : {}),
      ...(body ? { body } : {}),
    },
    // Our header objects are plain OpenAPI; the library's type only names its own HeadersObject.
    responses: {
      ...successes,
      ...errorResponses(route.auth, errors, route.errorDialect),
    } as RouteConfig['responses'],
  });
}

for (const route of allRoutes) registerRoute(route);

/** The routes that need more than the basic tier, by tier, as the gate reads them. */
const gated = new Map<string, Set<string>>();
for (const { tier, path } of allRoutes) {
  if (tier !== undefined) gated.set(tier, (gated.get(tier) ?? new Set()).add(path.replace(/\/\{.*$/, '')));
}
const tierRules = [...gated]
  .map(([tier, paths]) => `${[...paths].join(' and ')} need ${tier} or higher (403 tier_required).`)
  .join(' ');

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

Tiers: ${tierSummary} ${tierRules}

Rate limits: per key, shared by every gateway replica. Every authenticated response carries RateLimit-Policy and RateLimit; over the limit → 429 rate_limited with Retry-After. 401/403 responses do not spend the key's quota; failed authentication is limited per client IP.

Request ids: every response has X-Request-Id (a well-formed incoming one is echoed).

Errors: every error body is {"error": {"code", "message", "request_id", "param"?}} with a stable code (schema ErrorCode). Unknown JSON fields are ignored; a known field of the wrong type or out of range is a 400 naming it in param. Bodies over the route's limit → 413; a JSON route sent another content type → 415.`;

const generated = new OpenApiGeneratorV31([
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
    {
      name: 'Usage',
      description:
        "A key's own metered usage (tokens, audio seconds, images, megapixel-steps, video, browser time) per UTC hour or day.",
    },
    {
      name: 'Webhooks',
      description:
        "A key's own HTTPS endpoints for its events, signed as Standard Webhooks v1 and retried from a durable queue, with a delivery log and replay.",
    },
    { name: 'Operations', description: 'Probes and this documentation. No authentication.' },
    {
      name: 'OpenAI-compatible',
      description:
        "OpenAI's request, response, stream and error shapes under /v1, for OpenAI's own client libraries pointed at this gateway (`baseURL: <gateway>/v1`): the same keys, IP allowlists, tiers, rate limits and request ids as the rest of the API. Errors are `{\"error\": {message, type, param, code}}` with this API's statuses and stable codes; 429 and 503 keep `Retry-After`.",
    },
  ],
});

/** Plain JSON (no zod objects or undefined values left), frozen: served as is and read by tests. */
export const openApiDocument: OpenApiDocument = deepFreeze(
  JSON.parse(JSON.stringify(generated)) as OpenApiDocument,
);

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;
