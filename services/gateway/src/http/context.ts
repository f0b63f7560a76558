import type { Logger } from '@switchboard/telemetry';
import type { KeyRecord } from '@switchboard/keys';

/** What the gateway's middleware learns about a request, carried on `res.locals.ctx`. */
export class RequestContext {
  clientIp = '';
  /**
   * Whether the request's API key still authenticates (false once it is revoked), for requests
   * that stay open; set with the key.
   */
  keyStillValid: () => boolean = () => false;
  private authenticatedKey: KeyRecord | undefined;
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly root: Logger,
  ) {}

  /** Set once the API key is authenticated. */
  get key(): KeyRecord | undefined {
    return this.authenticatedKey;
  }

  set key(key: KeyRecord | undefined) {
    this.authenticatedKey = key;
    this.child = undefined; // the next log line carries key_id
  }

  /**
   * The request's child logger, made on first use: on the hot path most requests log nothing
   * but the access line, and a pino child costs more than the rest of authentication.
   */
  get logger(): Logger {
    this.child ??= this.root.child(
      this.authenticatedKey
        ? { request_id: this.requestId, key_id: this.authenticatedKey.id }
        : { request_id: this.requestId },
    );
    return this.child;
  }
}

declare module 'express-serve-static-core' {
  interface Locals {
    ctx: RequestContext;
  }
}
