import { createHmac } from 'node:crypto';
import { secretBytes } from './secrets.js';

/**
 * The `webhook-signature` header of Standard Webhooks v1: one `v1,<base64 HMAC-SHA256>` of
 * "<id>.<timestamp>.<body>" per secret, space-separated. During a rotation both secrets sign, so a
 * receiver still holding the old one keeps verifying.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSec: number,
  body: string,
): string {
  const signed = `${id}.${timestampSec}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(signed).digest('base64')}`)
    .join(' ');
}
