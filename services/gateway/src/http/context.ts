import type { Logger } from '@switchboard/telemetry';
import type { KeyRecord } from '@switchboard/keys';

/** What the gateway's middleware learns about a request, carried on `res.locals`. */
export interface RequestContext {
  requestId: string;
  logger: Logger;
  clientIp: string;
  /** Set once the API key is authenticated. */
  key?: KeyRecord;
}

declare module 'express-serve-static-core' {
  interface Locals {
    ctx: RequestContext;
  }
}
