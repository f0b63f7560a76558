/**
 * Shared pieces of the OpenAPI document (API.md §1): object types, security schemes, the error
 * schema and its code table, the headers every response carries, path parameters, and the
 * helpers the path files use to reference them. Written by hand from API.md, except the error
 * codes, which come from the one error table; the tests compare both with API.md.
 */
import { errorCodes, httpStatusOf, type ErrorCode } from '@switchboard/errors';

// ---------------------------------------------------------------------------------------------
// Object types (the subset of OpenAPI 3.1 this document uses)

/** A JSON Schema 2020-12 object (OpenAPI 3.1 schemas are plain JSON Schema). */
export type Schema = { readonly [keyword: string]: unknown };

export interface Ref {
  readonly $ref: string;
  readonly summary?: string;
  readonly description?: string;
}

export interface Header {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: Schema;
  readonly example?: unknown;
}

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly description?: string;
  readonly required?: boolean;
  readonly schema: Schema;
  readonly example?: unknown;
}

export interface MediaType {
  readonly schema?: Schema | Ref;
  readonly example?: unknown;
  readonly encoding?: Readonly<Record<string, { readonly contentType?: string }>>;
  readonly [extension: `x-${string}`]: unknown;
}

export type Content = Readonly<Record<string, MediaType>>;

export interface Response {
  readonly description: string;
  readonly headers?: Readonly<Record<string, Header | Ref>>;
  readonly content?: Content;
  readonly [extension: `x-${string}`]: unknown;
}

export interface RequestBody {
  readonly description?: string;
  readonly required?: boolean;
  readonly content: Content;
}

export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly security?: readonly SecurityRequirement[];
  readonly parameters?: readonly (Parameter | Ref)[];
  readonly requestBody?: RequestBody;
  readonly responses: Readonly<Record<string, Response | Ref>>;
  readonly [extension: `x-${string}`]: unknown;
}

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';
export type PathItem = { readonly [M in Method]?: Operation } & { readonly summary?: string };
export type Paths = Readonly<Record<string, PathItem>>;
export type Schemas = Readonly<Record<string, Schema>>;

// ---------------------------------------------------------------------------------------------
// References

export const ref = (schema: string): Ref => ({ $ref: `#/components/schemas/${schema}` });
export const headerRef = (header: string, description?: string): Ref =>
  description === undefined
    ? { $ref: `#/components/headers/${header}` }
    : { $ref: `#/components/headers/${header}`, description };
export const parameterRef = (parameter: string): Ref => ({ $ref: `#/components/parameters/${parameter}` });

export const json = (schema: Schema | Ref, example?: unknown): Content => ({
  'application/json': example === undefined ? { schema } : { schema, example },
});

export const jsonBody = (schema: string, description?: string): RequestBody => ({
  required: true,
  ...(description === undefined ? {} : { description }),
  content: json(ref(schema)),
});

// ---------------------------------------------------------------------------------------------
// Security (API.md §1, §7)

export const securitySchemes = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sb_<key id>_<secret>',
    description:
      'An API key in `Authorization: Bearer <api_key>`. Missing, malformed, unknown, revoked or expired keys get ' +
      '`401 unauthorized`; a key in the query string is never accepted.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The cluster admin token (`ADMIN_TOKEN`) in `Authorization: Bearer <token>`; never an API key.',
  },
} as const;

export type Auth = 'apiKey' | 'admin' | 'public';

export const security: Readonly<Record<Auth, readonly SecurityRequirement[]>> = {
  apiKey: [{ apiKey: [] }],
  admin: [{ adminToken: [] }],
  public: [],
};

// ---------------------------------------------------------------------------------------------
// Errors (API.md §1): derived from the one error table in @switchboard/errors, so the document
// cannot name a code the gateway does not have, or give one another status.

export type { ErrorCode };

const statusOfCode = new Map<ErrorCode, string>(errorCodes.map((code) => [code, String(httpStatusOf(code))]));

export const errorCodesByStatus: Readonly<Record<string, readonly ErrorCode[]>> = Object.fromEntries(
  [...new Set(statusOfCode.values())]
    .sort()
    .map((status) => [status, errorCodes.filter((code) => statusOfCode.get(code) === status)]),
);

const statusText: Readonly<Record<string, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Codes with a `Retry-After` header (API.md §1). */
const retryAfterCodes: readonly ErrorCode[] = ['rate_limited', 'model_loading', 'no_capacity'];

const errorSchemas: Schemas = {
  ErrorCode: {
    type: 'string',
    description: 'A stable snake_case error code. Codes are part of the contract and are never renamed.',
    enum: Object.values(errorCodesByStatus).flat(),
    'x-codes-by-status': errorCodesByStatus,
  },
  Error: {
    type: 'object',
    description:
      'Every error body. No stack traces, worker host names, bucket names or key hashes ever appear in one.',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'request_id'],
        properties: {
          code: ref('ErrorCode'),
          message: { type: 'string', description: 'Human-readable text.' },
          request_id: { type: 'string', description: 'The `X-Request-Id` of the request.' },
          param: { type: 'string', description: 'The request field at fault, when exactly one is.' },
        },
      },
    },
    example: {
      error: {
        code: 'invalid_request',
        message: 'temperature: must be at most 2',
        request_id: '0b9c…',
        param: 'temperature',
      },
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Headers and parameters

export const headers: Readonly<Record<string, Header>> = {
  'X-Request-Id': {
    description:
      'The request id: echoes a well-formed incoming `X-Request-Id`, else a new UUID. Also in every log line of the gateway and the workers it called.',
    required: true,
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description:
      'The key\'s rate-limit policy (IETF httpapi ratelimit-headers draft): `"default";q=<requests per window>;w=60`.',
    required: true,
    schema: { type: 'string' },
    example: '"default";q=600;w=60',
  },
  RateLimit: {
    description: 'What is left of the current window: `"default";r=<remaining>;t=<seconds to reset>`.',
    required: true,
    schema: { type: 'string' },
    example: '"default";r=598;t=42',
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 0 },
    example: 5,
  },
  'Accept-Ranges': {
    description: 'Stored files can be read in parts: `bytes`.',
    schema: { const: 'bytes' },
  },
  'Content-Range': {
    description: 'The bytes sent and the size of the whole file: `bytes <first>-<last>/<size>`.',
    required: true,
    schema: { type: 'string' },
    example: 'bytes 0-1048575/7340032',
  },
  'Content-Language': {
    description: 'The ISO 639-1 code of the language the audio was transcribed as (given or detected).',
    schema: { type: 'string', pattern: '^[a-z]{2}$' },
    example: 'en',
  },
};

export const parameters: Readonly<Record<string, Parameter>> = {
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    description: 'Optional request id to use; a well-formed one is echoed in the response and the logs.',
    schema: { type: 'string' },
  },
  SessionId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The browser session id (UUID v4). Sessions of other keys are `404 session_not_found`.',
    schema: { type: 'string', format: 'uuid' },
  },
  JobId: {
    name: 'job_id',
    in: 'path',
    required: true,
    description: 'The animation job id. Jobs of other keys are `404 job_not_found`.',
    schema: { type: 'string', pattern: '^job-' },
  },
  KeyId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The API key id (the `<key id>` part of `sb_<key id>_<secret>`).',
    schema: { type: 'string' },
  },
};

// ---------------------------------------------------------------------------------------------
// Response helpers

/** `X-Request-Id` on every response; the rate-limit pair on every response a key was counted for. */
function responseHeaders(auth: Auth, counted: boolean): Record<string, Ref> {
  return {
    'X-Request-Id': headerRef('X-Request-Id'),
    ...(auth === 'apiKey' && counted
      ? { 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') }
      : {}),
  };
}

/** A success response of an operation with the given authentication. */
export function success(
  auth: Auth,
  description: string,
  content?: Content,
  extraHeaders?: Record<string, Header | Ref>,
): Response {
  return {
    description,
    headers: { ...responseHeaders(auth, true), ...extraHeaders },
    ...(content === undefined ? {} : { content }),
  };
}

/**
 * The error responses of an operation: one per status, each listing its possible codes in the
 * description and in `x-error-codes`. Statuses come from the code table, never typed by hand.
 */
export function errorResponses(auth: Auth, codes: readonly ErrorCode[]): Record<string, Response> {
  const byStatus = new Map<string, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = statusOfCode.get(code)!;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Response> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => Number(a) - Number(b))) {
    const retry = list.filter((code) => retryAfterCodes.includes(code));
    // 401 and 403 are answered before a key is counted (API.md §1).
    const counted = status !== '401' && status !== '403';
    responses[status] = {
      description: `${statusText[status] ?? 'Error'}: ${list.map((code) => `\`${code}\``).join(', ')}.`,
      headers: {
        ...responseHeaders(auth, counted),
        ...(retry.length > 0
          ? {
              'Retry-After': headerRef(
                'Retry-After',
                `Sent with ${retry.map((c) => `\`${c}\``).join(' and ')}.`,
              ),
            }
          : {}),
      },
      content: json(ref('Error')),
      'x-error-codes': list,
    };
  }
  return responses;
}

/** What any call with an API key can fail with. */
export const keyErrors = [
  'unauthorized',
  'ip_not_allowed',
  'rate_limited',
  'internal',
] as const satisfies readonly ErrorCode[];
/** What any admin call can fail with (failed admin authentication is limited per client IP). */
export const adminErrors = [
  'unauthorized',
  'ip_not_allowed',
  'rate_limited',
  'internal',
] as const satisfies readonly ErrorCode[];
/** What a JSON body can fail with. */
export const jsonBodyErrors = [
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
] as const satisfies readonly ErrorCode[];
/** What a call the gateway relays to a worker can fail with. */
export const workerErrors = [
  'upstream_failed',
  'unavailable',
  'upstream_timeout',
] as const satisfies readonly ErrorCode[];

export const sharedComponents = {
  securitySchemes,
  headers,
  parameters,
  schemas: errorSchemas,
} as const;
