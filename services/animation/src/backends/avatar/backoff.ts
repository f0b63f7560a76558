// Waiting on the vendor: how long to wait before the next try of a failed call, how long between
// status polls, what a `Retry-After` header asks for, and a sleep that a cancel ends at once. All
// of it pure except `sleep`, so the timing rules are tested without a server.

/** Delays for retries of transient vendor failures (429, 5xx, network, per-request timeout). */
export interface RetryPolicy {
  /** The first wait. */
  readonly baseMs: number;
  /** No wait is longer than this (a `Retry-After` may still ask for more; the deadline decides). */
  readonly maxMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { baseMs: 500, maxMs: 8_000 };

/**
 * The wait before retry number `attempt` (0 = the first retry): doubling from `baseMs`, capped,
 * with "equal jitter" (half fixed, half random) so replicas that failed together do not all come
 * back in the same instant, while the wait never drops below half the nominal value.
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}

/**
 * `Retry-After` in milliseconds: either delay-seconds or an HTTP date (RFC 9110 §10.2.3); absent,
 * unparsable or in the past → undefined (the caller falls back to its own backoff).
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date has a day or month name; Date.parse alone would take "-1" for a year.
  const at = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : NaN;
  if (Number.isNaN(at)) return undefined;
  return at > now ? at - now : 0;
}

/**
 * Status polls: the first after `intervalMs`, each later one 1.5× further apart, up to 10× the
 * interval (at most 10 s): a talk of a few seconds is seen soon after it ends, a long one does
 * not cost a request a second.
 */
export function pollDelayMs(poll: number, intervalMs: number): number {
  const cap = Math.max(intervalMs, Math.min(intervalMs * 10, 10_000));
  return Math.round(Math.min(cap, intervalMs * 1.5 ** Math.max(0, poll)));
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts (a canceled job). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
