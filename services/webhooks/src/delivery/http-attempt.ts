// One delivery attempt: a single POST to a tenant's URL, made only to the address the address
// guard approved when the attempt began. The name is resolved and judged here, on every attempt,
// and the connection goes to that address — never the name again — so a name that answers with a
// public address at registration and an internal one later (DNS rebinding) is refused at connect
// time. Nothing else is followed: no redirects, no proxies, no keep-alive connection reused.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  HostUnresolvedError,
  resolveAllowed,
  UrlNotAllowedError,
  type AllowedHosts,
  type HostResolver,
  type ResolvedAddress,
} from '@switchboard/address-guard';
import { checkWebhookUrl } from '@switchboard/webhooks';

/** What is kept of a response body: enough to debug a receiver, never a download. */
export const RESPONSE_BODY_LIMIT = 1024;

export interface AttemptGuard {
  /** Exempt hosts: skip the address check, and may be reached over http://. */
  allowed: AllowedHosts;
  resolver: HostResolver;
}

export interface AttemptOptions {
  guard: AttemptGuard;
  /** The whole attempt (resolution, connection, response) must end within this. */
  timeoutMs: number;
  /** Extra trust anchors for https (tests' own CA); unset = the system's. */
  ca?: string | Buffer;
}

/**
 * How an attempt ended. `response`: the endpoint answered (any status); `timeout`: not within
 * the time; `refused`: the guard refused the URL (nothing was sent); `error`: resolution,
 * connection, TLS or protocol failure.
 */
export type AttemptKind = 'response' | 'timeout' | 'refused' | 'error';

export interface HttpAttemptResult {
  kind: AttemptKind;
  status: number | null;
  /** From the start of the attempt to its end. */
  ms: number;
  /** The first RESPONSE_BODY_LIMIT bytes of the body, as text. */
  body: string | null;
  /** The raw Retry-After header, when the endpoint sent one. */
  retryAfter: string | null;
  /** Why it failed, for the delivery log: never a resolved address, never the URL's path. */
  error: string | null;
}

/** Sends `body` to `url` once; never throws. */
export async function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: AttemptOptions,
): Promise<HttpAttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const ended = (kind: AttemptKind, fields: Partial<HttpAttemptResult>): HttpAttemptResult => ({
    kind,
    status: null,
    body: null,
    retryAfter: null,
    error: null,
    ...fields,
    ms: elapsed(),
  });

  let target: Target;
  try {
    target = await approvedTarget(url, options.guard, options.timeoutMs);
  } catch (error) {
    if (error instanceof UrlNotAllowedError) return ended('refused', { error: error.message });
    if (error instanceof TimeoutError) return ended('timeout', { error: error.message });
    if (error instanceof HostUnresolvedError) return ended('error', { error: 'The host does not resolve.' });
    throw error;
  }

  const remainingMs = Math.max(1, options.timeoutMs - elapsed());
  const outcome = await send(target, body, headers, remainingMs, options.ca);
  return ended(outcome.kind, outcome);
}

interface Target {
  url: URL;
  host: string;
  port: number;
  address: ResolvedAddress;
}

/** The URL's rules (scheme, credentials), then the guard's answer for its host, at most `timeoutMs`. */
async function approvedTarget(raw: string, guard: AttemptGuard, timeoutMs: number): Promise<Target> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlNotAllowedError('scheme', 'The URL is not a valid URL.');
  }
  const { host, port } = checkWebhookUrl(url, guard.allowed);
  const address = await withDeadline(resolveAllowed(host, port, guard), timeoutMs);
  return { url, host, port, address };
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`No answer within ${ms} ms.`);
  }
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

type SendOutcome = Omit<HttpAttemptResult, 'ms'>;

function send(
  target: Target,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  ca: string | Buffer | undefined,
): Promise<SendOutcome> {
  const { address } = target;
  // Every lookup of this request answers the approved address: the connection cannot reach any
  // other, while the request keeps the host name (Host header, TLS SNI and certificate check).
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
  const secure = target.url.protocol === 'https:';
  const payload = Buffer.from(body, 'utf8');
  const requestOptions: https.RequestOptions = {
    method: 'POST',
    host: target.host,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    headers: { ...headers, 'content-length': String(payload.length) },
    lookup,
    // A connection of its own: nothing pooled (a pooled socket was approved for another attempt),
    // and no agent that might honour proxy variables.
    agent: false,
    // SNI and the certificate name are the host's (an IP literal has no SNI).
    ...(secure && !ipLiteral(target.host) ? { servername: target.host } : {}),
    ...(secure && ca ? { ca } : {}),
  };

  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    let status: number | null = null;
    let retryAfter: string | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const answered = (): SendOutcome => ({
      kind: 'response',
      status,
      body: Buffer.concat(chunks).toString('utf8'),
      retryAfter,
      error: null,
    });

    const request = (secure ? https : http).request(requestOptions, (response) => {
      status = response.statusCode ?? null;
      const header = response.headers['retry-after'];
      retryAfter = typeof header === 'string' ? header : null;
      response.on('data', (chunk: Buffer) => {
        const room = RESPONSE_BODY_LIMIT - kept;
        if (room > 0) {
          const part = chunk.subarray(0, room);
          chunks.push(part);
          kept += part.length;
        }
        // The rest is not read: an endpoint cannot make the sender download anything large.
        if (kept >= RESPONSE_BODY_LIMIT) finish(answered());
      });
      response.on('end', () => finish(answered()));
      response.on('error', () => finish(answered()));
    });
    const timer = setTimeout(() => {
      // Answered in time but the body dragged on: the status stands, with what came of the body.
      if (status !== null) finish(answered());
      else
        finish({
          kind: 'timeout',
          status: null,
          body: null,
          retryAfter: null,
          error: `No answer within ${timeoutMs} ms.`,
        });
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (status !== null) finish(answered());
      else finish({ kind: 'error', status: null, body: null, retryAfter: null, error: describeError(error) });
    });
    request.end(payload);
  });
}

function ipLiteral(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(':');
}

/** A failure in words, from its code: Node's messages name the address connected to. */
function describeError(error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'unknown';
  switch (code) {
    case 'ECONNREFUSED':
      return 'Connection refused.';
    case 'ECONNRESET':
      return 'Connection reset by the endpoint.';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'The endpoint cannot be reached.';
    case 'ETIMEDOUT':
      return 'Connecting timed out.';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
      return 'The endpoint did not answer HTTP.';
    default:
      // TLS failures (certificate expired, wrong name, self-signed) have codes of their own.
      return /CERT|TLS|SSL|SELF_SIGNED|ALTNAME|VERIFY|ISSUER|SIGNATURE/i.test(code)
        ? `TLS failed: ${code}.`
        : `Request failed: ${code}.`;
  }
}
