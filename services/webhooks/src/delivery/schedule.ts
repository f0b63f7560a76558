// When a failed delivery is tried again: the operator's schedule (WEBHOOK_RETRY_SCHEDULE), each
// wait jittered so that the deliveries of one outage do not all come back in the same second,
// and later still when the endpoint asks for it (Retry-After) — never earlier than the schedule.

/** However long an endpoint asks to wait, a delivery is tried again within a day. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** ±20 %: spreads retries without making the schedule unrecognisable. */
const JITTER = 0.2;

/**
 * The next attempt after the `attempts`-th one failed (1 = the first attempt), or null when the
 * schedule is used up (the delivery is then failed). `random` is injectable for tests.
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attempts: number,
  now: Date,
  retryAfter: string | null = null,
  random: () => number = Math.random,
): Date | null {
  const wait = schedule[attempts - 1];
  if (wait === undefined) return null;
  const jittered = Math.round(wait * (1 - JITTER + 2 * JITTER * random()));
  const asked = retryAfterMs(retryAfter, now);
  return new Date(now.getTime() + Math.max(jittered, asked ?? 0));
}

/**
 * A Retry-After header (delay in seconds, or an HTTP date) as milliseconds from `now`, capped at
 * MAX_RETRY_AFTER_MS; null when absent or unreadable. A date in the past asks for nothing.
 */
export function retryAfterMs(header: string | null, now: Date): number | null {
  if (header === null) return null;
  const text = header.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    const at = Date.parse(text);
    if (Number.isNaN(at) || !/[a-z]/i.test(text)) return null;
    ms = at - now.getTime();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}
