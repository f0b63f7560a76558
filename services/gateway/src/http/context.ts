import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import type { KeyRecord } from '@switchboard/keys';

/** What the gateway's middleware learns about a request, carried on `res.locals.ctx`. */
export class RequestContext {
  clientIp = '';
  /**
   * For requests that stay open: the error a new request with the same key from the same address
   * would get now (revoked key, stale key store, address no longer allowed), or undefined while
   * it may go on. Set with the key (auth/access.ts).
   */
  recheckAccess: () => SwitchboardError | undefined = () => new SwitchboardError('unauthorized');
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
