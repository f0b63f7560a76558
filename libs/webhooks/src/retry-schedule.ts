/** Waits between attempts: after the first failure the first entry, and so on. */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** One duration such as '250ms', '5s', '5m', '2h' or '1d', in milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: "${text}" (use a number and ms, s, m, h or d, e.g. 5m)`);
  const value = Number(match[1]) * UNIT_MS[match[2]!]!;
  if (!Number.isFinite(value)) throw new Error(`not a duration: "${text}"`);
  return Math.round(value);
}

/** '5s,5m,30m,2h,5h,10h,10h' → the waits in milliseconds. */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 0 || entries.some((entry) => entry === '')) {
    throw new Error(`not a retry schedule: "${text}" (comma-separated durations such as 5s,5m,2h)`);
  }
  return entries.map(parseDuration);
}
