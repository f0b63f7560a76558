/**
 * What every operation shares: the security schemes, the response headers, the error body and
 * the error responses. Error statuses come from the one error table in @switchboard/errors, so
 * the document cannot name a code the gateway does not have, or give one another status.
 */
import type { ZodContentObject } from '@asteasolutions/zod-to-openapi';
import { errorCodes, httpStatusOf, type ErrorCode } from '@switchboard/errors';
import { z } from 'zod';

export type Auth = 'apiKey' | 'admin' | 'public';

interface HeaderObject {
  description: string;
  required?: boolean;
  schema: Record<string, unknown>;
  example?: unknown;
}
interface ReferenceObject {
  $ref: string;
  description?: string;
}

export interface SuccessResponse {
  description: string;
  content?: ZodContentObject;
  headers?: Record<string, HeaderObject | ReferenceObject>;
}

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

export const headers = {
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
  Location: {
    description: 'Where the created resource can be read.',
    schema: { type: 'string' },
  },
} satisfies Record<string, HeaderObject>;

export const headerRef = (header: keyof typeof headers, description?: string): ReferenceObject =>
  description === undefined
    ? { $ref: `#/components/headers/${header}` }
    : { $ref: `#/components/headers/${header}`, description };

const statusOfCode = new Map<ErrorCode, number>(errorCodes.map((code) => [code, httpStatusOf(code)]));

/** The error codes of each HTTP status, in status order. */
export const errorCodesByStatus: Readonly<Record<string, readonly ErrorCode[]>> = Object.fromEntries(
  [...new Set(statusOfCode.values())]
    .sort((a, b) => a - b)
    .map((status) => [String(status), errorCodes.filter((code) => statusOfCode.get(code) === status)]),
);

export const ErrorCodeSchema = z
  .enum(Object.values(errorCodesByStatus).flat() as [ErrorCode, ...ErrorCode[]])
  .meta({
    id: 'ErrorCode',
    description: 'A stable snake_case error code. Codes are part of the contract and are never renamed.',
  });

export const ErrorSchema = z
  .object({
    error: z.object({
      code: ErrorCodeSchema,
      message: z.string().meta({ description: 'Human-readable text.' }),
      request_id: z.string().meta({ description: 'The `X-Request-Id` of the request.' }),
      param: z.string().optional().meta({ description: 'The request field at fault, when exactly one is.' }),
    }),
  })
  .meta({
    id: 'Error',
    description:
      'Every error body. No stack traces, worker host names, bucket names or key hashes ever appear in one.',
    example: {
      error: {
        code: 'invalid_request',
        message: 'temperature: must be at most 2',
        request_id: '0b9c…',
        param: 'temperature',
      },
    },
  });

export const OpenAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.enum([
        'invalid_request_error',
        'authentication_error',
        'permission_error',
        'not_found_error',
        'rate_limit_error',
        'server_error',
      ]),
      param: z.string().nullable().meta({ description: 'The request field at fault, when exactly one is.' }),
      code: ErrorCodeSchema,
      request_id: z.string().meta({ description: 'The `X-Request-Id` of the request.' }),
    }),
  })
  .meta({
    id: 'OpenAiError',
    description:
      "Every error under /v1: OpenAI's body, with the same HTTP status and the same stable code (in `code`) as the rest of the API, plus the request id (also in `X-Request-Id`) in `request_id`.",
    example: {
      error: {
        message: 'n: n other than 1 is not supported',
        type: 'invalid_request_error',
        param: 'n',
        code: 'invalid_request',
        request_id: '0b9c…',
      },
    },
  });

const statusText: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Codes answered with a `Retry-After` header (`unavailable` only when a store or broker is down). */
const retryAfterCodes: readonly ErrorCode[] = [
  'rate_limited',
  'concurrency_limit',
  'quota_exceeded',
  'model_loading',
  'no_capacity',
  'unavailable',
];

/** `X-Request-Id` on every response; the rate-limit pair on every response a key was counted for. */
export function responseHeaders(auth: Auth, counted: boolean): Record<string, ReferenceObject> {
  return {
    'X-Request-Id': headerRef('X-Request-Id'),
    ...(auth === 'apiKey' && counted
      ? { 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') }
      : {}),
  };
}

/**
 * The error responses of an operation: one per status, each naming its possible codes in the
 * description and in `x-error-codes`.
 */
export function errorResponses(auth: Auth, codes: readonly ErrorCode[], dialect?: 'openai') {
  const schema = dialect === 'openai' ? OpenAiErrorSchema : ErrorSchema;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = statusOfCode.get(code)!;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, SuccessResponse & { 'x-error-codes': ErrorCode[] }> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry = list.filter((code) => retryAfterCodes.includes(code));
    // 401 and 403 are answered before a key is counted.
    const counted = status !== 401 && status !== 403;
    responses[String(status)] = {
      description: `${statusText[status] ?? 'Error'}: ${list.map((code) => `\`${code}\``).join(', ')}.`,
      headers: {
        ...responseHeaders(auth, counted),
        ...(retry.length > 0
          ? {
              'Retry-After': headerRef(
                'Retry-After',
                `Sent with ${retry.map((c) => `\`${c}\``).join(', ')}${retry.includes('unavailable') ? ' (`unavailable`: when a store or broker the call needs is down)' : ''}.`,
              ),
            }
          : {}),
      },
      content: { 'application/json': { schema } },
      'x-error-codes': list,
    };
  }
  return responses;
}

/**
 * 416 for a file served in byte ranges: a `Range` that selects no byte of it is an
 * `invalid_request` with the status HTTP names for it, and `Content-Range: bytes *` plus the size.
 */
export function rangeNotSatisfiable(dialect?: 'openai'): SuccessResponse {
  return {
    description:
      'Range Not Satisfiable: `invalid_request`, for a `Range` that selects no byte of the file (it starts past the end).',
    headers: { 'Content-Range': headerRef('Content-Range', '`bytes */<size of the file>`.') },
    content: { 'application/json': { schema: dialect === 'openai' ? OpenAiErrorSchema : ErrorSchema } },
  };
}

/** The refusals of a static file (/docs, /admin and what they load) to the request's own headers. */
export function staticFileRefusals(): Record<number, SuccessResponse> {
  return {
    412: {
      description:
        'Precondition Failed: `invalid_request`, for an `If-Match` or `If-Unmodified-Since` the file does not meet.',
      content: json(ErrorSchema),
    },
    416: rangeNotSatisfiable(),
  };
}

/** What any call with an API key can fail with. */
export const keyErrors = [
  'unauthorized',
  'ip_not_allowed',
  'rate_limited',
  'internal',
] as const satisfies readonly ErrorCode[];
/** What any admin call can fail with (failed admin authentication is limited per client IP). */
export const adminErrors = keyErrors;
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

/** Helpers for response bodies. */
export const json = <S extends z.ZodType>(schema: S) =>
  ({ 'application/json': { schema } }) satisfies ZodContentObject;

/**
 * `value.multipleOf(step)`, also written into the document: the generator does not carry zod 4's
 * multipleOf check into the JSON Schema by itself.
 */
export const multipleOf = <N extends z.ZodNumber | z.ZodCoercedNumber>(value: N, step: number): N =>
  value.multipleOf(step, `must be a multiple of ${step}`).meta({ multipleOf: step }) as N;
