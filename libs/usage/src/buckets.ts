import type { Bucket } from './store.js';

const bucketMs: Record<Bucket, number> = { hour: 3_600_000, day: 86_400_000 };

/** The range rounded out to whole UTC buckets: start floored, end ceiled. */
export function alignRange(start: Date, end: Date, bucket: Bucket): { start: Date; end: Date } {
  const size = bucketMs[bucket];
  return {
    start: new Date(Math.floor(start.getTime() / size) * size),
    end: new Date(Math.ceil(end.getTime() / size) * size),
  };
}

/** How many buckets an aligned range holds. */
export function bucketCount(start: Date, end: Date, bucket: Bucket): number {
  return Math.round((end.getTime() - start.getTime()) / bucketMs[bucket]);
}
