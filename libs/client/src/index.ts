/**
 * A typed client for the Switchboard HTTP API: openapi-fetch over the types generated from the
 * gateway's OpenAPI document (schema.ts), with the credential set once. Every path, parameter,
 * body and response (error bodies included) is typed by the document, so a call the gateway
 * would not accept does not compile.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/**
 * Responses are typed by their JSON media types only. Without this, a call with more than one
 * success media type (`POST /query`: JSON or an event stream) would type its `data` as the union
 * of both, although the client only ever parses JSON unless told otherwise (`parseAs`).
 */
type JsonMedia = `${string}/json`;

export type SwitchboardClient = Client<paths, JsonMedia>;

/** A schema of the document by name, e.g. `Schema<'QueryRequest'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
/** The body of every error response: `{ error: { code, message, request_id, param? } }`. */
export type ErrorBody = Schema<'Error'>;
/** The stable error codes (`error.code`). */
export type ErrorCode = Schema<'ErrorCode'>;
export type QueryRequest = Schema<'QueryRequest'>;
export type QueryResponse = Schema<'QueryResponse'>;
/** One `data:` event of a streamed `POST /query`, then a QueryStreamEnd, then `data: [DONE]`. */
export type QueryStreamDelta = Schema<'QueryStreamDelta'>;
export type QueryStreamEnd = Schema<'QueryStreamEnd'>;

export interface SwitchboardClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** An API key, sent as `Authorization: Bearer <key>` with every call. */
  apiKey?: string;
  /** The admin token, for the `/admin/api/...` calls, sent the same way. */
  adminToken?: string;
  /** Replaces `globalThis.fetch` (a proxy-aware fetch, a test double). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client for one gateway and one credential: an API key, or the admin token (make one client
 * for each). The probes and /openapi.json need neither.
 *
 * Each call resolves to `{ data, error, response }`: `data` on a 2xx, else `error` (the typed
 * ErrorBody); a network failure rejects. Binary downloads (images, videos) and multipart uploads
 * are plain `fetch` calls with the same header.
 *
 * Streaming is the caller's business: `POST /query` with `stream: true` and the option
 * `parseAs: 'stream'` gives `data` as the response's ReadableStream of server-sent events, each
 * `data: <json>` line a QueryStreamDelta, then a QueryStreamEnd, then `data: [DONE]` (a failure
 * after the stream started arrives as `data: {"error": …}`).
 */
export function createSwitchboardClient(options: SwitchboardClientOptions): SwitchboardClient {
  if (options.apiKey !== undefined && options.adminToken !== undefined) {
    throw new TypeError('createSwitchboardClient takes an apiKey or an adminToken, not both');
  }
  const credential = options.apiKey ?? options.adminToken;
  return createClient<paths, JsonMedia>({
    baseUrl: options.baseUrl,
    ...(credential === undefined ? {} : { headers: { Authorization: `Bearer ${credential}` } }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}
