import { SwitchboardError } from '@switchboard/errors';
import { alignRange, bucketCount, type Bucket, type GroupBy, type UsageQuery } from '@switchboard/usage';

/** A usage report spans at most this many buckets: a year of days, or six weeks of hours. */
export const MAX_BUCKETS = 1000;
const DEFAULT_SPAN_MS = 7 * 86_400_000;
const DEFAULT_GROUP_BY: readonly GroupBy[] = ['capability', 'model', 'meter'];

export interface UsageQueryParams {
  start?: string | undefined;
  end?: string | undefined;
  bucket?: Bucket | undefined;
  group_by?: string | undefined;
}

function invalid(param: string, message: string): SwitchboardError {
  return new SwitchboardError('invalid_request', { param, message });
}

function instant(value: string | undefined, param: string, fallback: Date): Date {
  if (value === undefined) return fallback;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(param, `${param} must be an ISO 8601 time with an offset.`);
  return at;
}

/**
 * `group_by` as a list; `meter` is always added, since amounts of different meters never add up.
 * `key_id` only where the caller may see other keys (the admin call).
 */
export function parseGroupBy(value: string | undefined, allowKeyId: boolean): GroupBy[] {
  if (value === undefined) return [...DEFAULT_GROUP_BY];
  const allowed: readonly string[] = allowKeyId
    ? ['capability', 'model', 'meter', 'key_id']
    : ['capability', 'model', 'meter'];
  const groups = new Set<GroupBy>(['meter']);
  for (const part of value.split(',')) {
    const name = part.trim();
    if (name === '') continue;
    if (!allowed.includes(name)) {
      throw invalid(
        'group_by',
        `group_by may hold only ${allowed.join(', ')}; ${JSON.stringify(name.slice(0, 40))} is not one.`,
      );
    }
    groups.add(name as GroupBy);
  }
  return [...groups];
}

/** Checks and fills a usage query: defaults, start < end, UTC bucket edges, at most MAX_BUCKETS. */
export function usageQueryFrom(
  params: UsageQueryParams,
  keyIds: readonly string[] | null,
  allowKeyId: boolean,
  now: Date = new Date(),
): UsageQuery {
  const bucket: Bucket = params.bucket ?? 'day';
  const end = instant(params.end, 'end', now);
  const start = instant(params.start, 'start', new Date(end.getTime() - DEFAULT_SPAN_MS));
  if (start.getTime() >= end.getTime()) throw invalid('start', 'start must be before end.');
  const aligned = alignRange(start, end, bucket);
  if (bucketCount(aligned.start, aligned.end, bucket) > MAX_BUCKETS) {
    throw invalid(
      'start',
      `The range spans more than ${MAX_BUCKETS} ${bucket} buckets; narrow it or use bigger buckets.`,
    );
  }
  return { keyIds, ...aligned, bucket, groupBy: parseGroupBy(params.group_by, allowKeyId) };
}
