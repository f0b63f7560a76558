/**
 * The gateway's HTTP contract is declared here, once: each route's request schemas (the same zod
 * schemas its handler validates with) and its responses are registered with `declareRoute`, and
 * the OpenAPI document (document.ts), /docs and the typed client (libs/client) are all
 * generated from this registry. A test walks the Express router and fails when a served route is
 * not declared here or a declared one is not served.
 */
import { OpenAPIRegistry, type RouteConfig, type ZodContentObject } from '@asteasolutions/zod-to-openapi';
import type { ErrorCode } from '@switchboard/errors';
import type { z } from 'zod';
import { errorResponses, responseHeaders, type Auth, type SuccessResponse } from './responses.js';

export const registry = new OpenAPIRegistry();

export type Tag =
  | 'Language model'
  | 'Transcription'
  | 'Images'
  | 'Animation'
  | 'Browser sessions'
  | 'Administration'
  | 'Operations'
  | 'OpenAI-compatible';

type ObjectSchema = z.ZodObject | z.ZodPipe;

export interface RouteDeclaration {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The path as served, in OpenAPI form: `/admin/api/keys/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: Tag;
  auth: Auth;
  /** `openai`: errors come in OpenAI's body (the routes under /v1); default: API.md §1's. */
  errorDialect?: 'openai';
  params?: ObjectSchema;
  query?: ObjectSchema;
  /** Request headers the operation reads (beyond Authorization and X-Request-Id). */
  headers?: z.ZodObject;
  /**
   * A JSON body schema (required), or the content map for other media types (multipart) and for
   * bodies that may be left out (`required: false`).
   */
  body?: z.ZodType | { description?: string; required?: boolean; content: ZodContentObject };
  /**
   * Success responses by status; their X-Request-Id and rate-limit headers are added here unless
   * the response is not the gateway's own (`gatewayHeaders: false`: a relayed WebSocket upgrade).
   */
  responses: Record<number, SuccessResponse & { gatewayHeaders?: false }>;
  /** Every error code the route can answer with; grouped by their status from the error table. */
  errors: readonly ErrorCode[];
  /**
   * The capability whose calls this route makes: each request holds one of the key's tier's
   * "model calls at once" for it while it runs (auth/model-calls.ts), or is refused with
   * `429 concurrency_limit`.
   */
  modelCalls?: ModelCapability;
}

export type ModelCapability = 'llm' | 'whisper' | 'diffusion';

/** The routes that hold a model call, by `METHOD /path` as served (none has path parameters). */
export const modelCallRoutes = new Map<string, ModelCapability>();

function isZodType(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

export function declareRoute(route: RouteDeclaration): void {
  if (route.modelCalls !== undefined) {
    modelCallRoutes.set(`${route.method.toUpperCase()} ${route.path}`, route.modelCalls);
  }
  const errors: readonly ErrorCode[] =
    route.modelCalls === undefined ? route.errors : [...route.errors, 'concurrency_limit'];
  const body =
    route.body === undefined
      ? undefined
      : isZodType(route.body)
        ? { required: true, content: { 'application/json': { schema: route.body } } }
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
    ...(route.description === undefined ? {} : { description: route.description }),
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
