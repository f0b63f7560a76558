// Which vendor failures a retry can mend, and how the rest read in a job's error. Decided by HTTP
// status and the vendor's documented `kind`, never by message text. A message names the call and
// the vendor's kind/description so an operator can act on it, and never the API key: the key is
// cut out of anything the vendor echoes back.
import { PermanentJobError } from '../backend.js';
import type { VendorFault } from './wire.js';

/** Labels for the vendor-error counter: a fixed set, so metric cardinality stays bounded. */
export type VendorErrorKind =
  | 'rate_limited'
  | 'server_error'
  | 'network'
  | 'timeout'
  | 'unauthorized'
  | 'invalid_request'
  | 'client_error'
  | 'bad_response'
  | 'talk_error'
  | 'talk_rejected'
  | 'deadline';

export interface StatusVerdict {
  /** True when the same call may succeed later (inside the job's vendor deadline). */
  readonly retry: boolean;
  readonly kind: VendorErrorKind;
}

/** A non-2xx answer: 429, 408 and 5xx are transient; every other 4xx is the request's own fault. */
export function classifyStatus(status: number): StatusVerdict {
  if (status === 429) return { retry: true, kind: 'rate_limited' };
  if (status === 408) return { retry: true, kind: 'timeout' };
  if (status >= 500) return { retry: true, kind: 'server_error' };
  if (status === 401 || status === 403) return { retry: false, kind: 'unauthorized' };
  if (status === 400 || status === 422) return { retry: false, kind: 'invalid_request' };
  return { retry: false, kind: 'client_error' };
}

const DESCRIPTION_LIMIT = 200;

/** `text` without `secret` anywhere in it, cut to a length fit for a job's error message. */
export function scrub(text: string, secret: string | undefined): string {
  let out = text;
  if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.length > DESCRIPTION_LIMIT ? `${out.slice(0, DESCRIPTION_LIMIT)}…` : out;
}

/** " ValidationError: validation failed": the vendor's kind and description, scrubbed; or "". */
export function faultText(fault: VendorFault, secret: string | undefined): string {
  const said = [fault.kind, fault.description].filter((part) => part !== undefined && part !== '');
  return said.length > 0 ? ` ${scrub(said.join(': '), secret)}` : '';
}

/** "D-ID POST /talks answered 400 ValidationError: validation failed". */
export function describeFailure(
  operation: string,
  status: number,
  fault: VendorFault,
  secret: string | undefined,
): string {
  return `D-ID ${operation} answered ${status}${faultText(fault, secret)}`;
}

export const upstreamFailed = (message: string, cause?: unknown) =>
  new PermanentJobError('upstream_failed', message, { cause });

export const upstreamTimeout = (message: string) => new PermanentJobError('upstream_timeout', message);
