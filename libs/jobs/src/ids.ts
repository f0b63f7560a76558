import { randomBytes } from 'node:crypto';

const JOB_ID = /^job-[0-9a-f]{12}-[0-9a-f]{16}$/;

/**
 * `job-<ms since epoch, 12 hex digits>-<64 random bits>`: ids sort by creation time as strings,
 * so listing newest first is a sort of the bucket's keys, and `after` pages by comparison.
 */
export function newJobId(now = Date.now()): string {
  return `job-${now.toString(16).padStart(12, '0')}-${randomBytes(8).toString('hex')}`;
}

export function isJobId(value: string): boolean {
  return JOB_ID.test(value);
}
