// The one door to the D-ID Talks API. Every call carries `Authorization: Basic <key>` (the key as
// the operator gave it, which is how D-ID issues it), a per-request timeout, and the job's signal.
// Transient failures (429, 408, 5xx, network errors, per-request timeouts) are retried here, with
// backoff and `Retry-After`, until the job's vendor deadline; then the job fails `upstream_timeout`.
// A failure no retry can mend (401/403, 400 ValidationError, other 4xx, a malformed answer) fails
// at once `upstream_failed`. A canceled job ends any wait at once with the signal's reason.
import { open } from 'node:fs/promises';
import type { Logger } from '@switchboard/telemetry';
import { PermanentJobError } from '../backend.js';
import { parseRetryAfter, retryDelayMs, sleep, type RetryPolicy } from './backoff.js';
import {
  classifyStatus,
  describeFailure,
  upstreamFailed,
  upstreamTimeout,
  type VendorErrorKind,
} from './errors.js';
import {
  parseCreatedTalk,
  parseFault,
  parseTalk,
  parseUpload,
  VendorResponseError,
  type CreateTalkBody,
  type Talk,
  type Upload,
} from './wire.js';

export interface DidClientOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly fetch: typeof fetch;
  readonly onVendorError: (kind: VendorErrorKind) => void;
  /** A result larger than this is refused (a vendor fault must not fill the worker's disk). */
  readonly maxResultBytes: number;
}

/** One job's view of the vendor: its cancel signal and the instant its vendor time runs out. */
export interface CallContext {
  readonly signal: AbortSignal;
  /** `Date.now()` value after which no call is started or retried. */
  readonly deadline: number;
  readonly logger: Logger;
}

/** A local file could not be written: not the vendor's fault, so never retried as one. */
class LocalWriteError extends Error {
  constructor(cause: unknown) {
    super('could not write the vendor result', { cause });
    this.name = 'LocalWriteError';
  }
}

interface Call<T> {
  /** For messages and logs: `POST /talks`, never a URL with credentials in it. */
  readonly operation: string;
  readonly url: URL;
  /** Built anew for each try (a multipart body is consumed by sending it). */
  readonly init: () => RequestInit;
  /** False for the result download: a pre-signed URL on another host must not see the key. */
  readonly auth: boolean;
  /** Reads a 2xx answer; runs under the same timeout as the request. */
  readonly read: (response: Response) => Promise<T>;
}

const ERROR_BODY_LIMIT = 16 * 1024;

async function readFault(response: Response) {
  try {
    const text = (await response.text()).slice(0, ERROR_BODY_LIMIT);
    return parseFault(JSON.parse(text));
  } catch {
    return parseFault(undefined);
  }
}

async function readJson(response: Response, operation: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new VendorResponseError(`${operation}: the answer is not JSON`);
  }
}

export class DidClient {
  private readonly base: URL;

  constructor(private readonly options: DidClientOptions) {
    // A trailing slash makes relative paths resolve under any path prefix the base URL has.
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  }

  uploadImage(bytes: Uint8Array, filename: string, type: string, ctx: CallContext): Promise<Upload> {
    return this.upload('images', 'image', bytes, filename, type, ctx);
  }

  uploadAudio(bytes: Uint8Array, filename: string, type: string, ctx: CallContext): Promise<Upload> {
    return this.upload('audios', 'audio', bytes, filename, type, ctx);
  }

  createTalk(body: CreateTalkBody, ctx: CallContext): Promise<{ readonly id: string }> {
    const operation = 'POST /talks';
    return this.send(
      {
        operation,
        url: new URL('talks', this.base),
        init: () => ({
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        auth: true,
        read: async (response) => parseCreatedTalk(await readJson(response, operation)),
      },
      ctx,
    );
  }

  getTalk(id: string, ctx: CallContext): Promise<Talk> {
    const operation = 'GET /talks/{id}';
    return this.send(
      {
        operation,
        url: new URL(`talks/${encodeURIComponent(id)}`, this.base),
        init: () => ({ method: 'GET' }),
        auth: true,
        read: async (response) => parseTalk(await readJson(response, operation)),
      },
      ctx,
    );
  }

  /** Streams `resultUrl` (the vendor's pre-signed storage URL) into `path`, without the key. */
  download(resultUrl: string, path: string, ctx: CallContext): Promise<void> {
    let url: URL;
    try {
      url = new URL(resultUrl);
    } catch {
      throw upstreamFailed('D-ID GET /talks/{id} answered a result_url that is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw upstreamFailed(`D-ID GET /talks/{id} answered a result_url of scheme ${url.protocol}`);
    }
    return this.send(
      {
        operation: 'GET result_url',
        url,
        init: () => ({ method: 'GET' }),
        auth: false,
        read: (response) => this.writeBody(response, path),
      },
      ctx,
    );
  }

  private upload(
    path: 'images' | 'audios',
    field: 'image' | 'audio',
    bytes: Uint8Array,
    filename: string,
    type: string,
    ctx: CallContext,
  ): Promise<Upload> {
    const operation = `POST /${path}`;
    return this.send(
      {
        operation,
        url: new URL(path, this.base),
        init: () => {
          const form = new FormData();
          form.append(field, new Blob([bytes], { type }), filename);
          return { method: 'POST', body: form };
        },
        auth: true,
        read: async (response) => parseUpload(await readJson(response, operation), operation),
      },
      ctx,
    );
  }

  private async writeBody(response: Response, path: string): Promise<void> {
    if (!response.body) throw new VendorResponseError('GET result_url: the answer has no body');
    const file = await open(path, 'w').catch((error: unknown) => {
      throw new LocalWriteError(error);
    });
    try {
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > this.options.maxResultBytes) {
          throw new VendorResponseError(
            `GET result_url: the video exceeds ${this.options.maxResultBytes} bytes`,
          );
        }
        await file.write(chunk).catch((error: unknown) => {
          throw new LocalWriteError(error);
        });
      }
    } finally {
      await file.close();
    }
  }

  /** One call with its retries; see the file's header for the rules. */
  private async send<T>(call: Call<T>, ctx: CallContext): Promise<T> {
    const { operation } = call;
    for (let attempt = 0; ; attempt++) {
      ctx.signal.throwIfAborted();
      const left = ctx.deadline - Date.now();
      if (left <= 0) throw this.outOfTime(operation, 'the deadline passed before it could be sent');
      const timeoutMs = Math.min(this.options.requestTimeoutMs, left);
      const timeout = AbortSignal.timeout(timeoutMs);
      let retryAfterMs: number | undefined;
      let failure: string;
      try {
        const init = call.init();
        const headers = new Headers(init.headers);
        headers.set('accept', 'application/json');
        if (call.auth) headers.set('authorization', `Basic ${this.options.apiKey}`);
        const response = await this.options.fetch(call.url, {
          ...init,
          headers,
          signal: AbortSignal.any([ctx.signal, timeout]),
        });
        if (response.ok) return await call.read(response);
        const fault = await readFault(response);
        const verdict = classifyStatus(response.status);
        this.options.onVendorError(verdict.kind);
        const message = describeFailure(operation, response.status, fault, this.options.apiKey);
        if (!verdict.retry) throw upstreamFailed(message);
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
        failure = message;
      } catch (error) {
        if (error instanceof PermanentJobError || error instanceof LocalWriteError) throw error;
        ctx.signal.throwIfAborted();
        if (error instanceof VendorResponseError) {
          this.options.onVendorError('bad_response');
          throw upstreamFailed(`D-ID ${error.message}`, error);
        }
        if (timeout.aborted) {
          this.options.onVendorError('timeout');
          failure = `D-ID ${operation} gave no answer within ${timeoutMs} ms`;
        } else if (error instanceof TypeError) {
          // What fetch throws for refused connections, resets, DNS failures and cut-off bodies.
          this.options.onVendorError('network');
          failure = `D-ID ${operation} could not be reached`;
        } else {
          throw error;
        }
      }
      const delay = retryAfterMs ?? retryDelayMs(attempt, this.options.retry);
      if (delay >= ctx.deadline - Date.now()) throw this.outOfTime(operation, failure);
      ctx.logger.warn(
        { operation, attempt: attempt + 1, delay_ms: delay, reason: failure },
        'vendor call failed, retrying',
      );
      await sleep(delay, ctx.signal);
    }
  }

  private outOfTime(operation: string, last: string): PermanentJobError {
    this.options.onVendorError('deadline');
    return upstreamTimeout(`D-ID ${operation} did not succeed within the vendor deadline (${last})`);
  }
}
