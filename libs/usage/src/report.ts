import type { UsageQuery, UsageReport, UsageResult } from './store.js';

/**
 * Results as the store returns them: a bucket's start (Unix ms) and results, in order. A bucket
 * may come as several rows (one per key), whose results follow each other.
 */
export interface BucketRow {
  at: number;
  results: UsageResult[];
}

const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 } as const;

/**
 * The report's shape: every bucket from start to end, oldest first, the empty ones included
 * (UTC has no daylight saving, so every bucket has the same length).
 */
export function reportFrom(query: UsageQuery, rows: readonly BucketRow[]): UsageReport {
  const size = BUCKET_MS[query.bucket];
  const byBucket = new Map<number, UsageResult[]>();
  for (const row of rows) {
    const results = byBucket.get(row.at);
    if (results) results.push(...row.results);
    else byBucket.set(row.at, row.results);
  }
  const data: UsageReport['data'] = [];
  for (let at = query.start.getTime(); at < query.end.getTime(); at += size) {
    data.push({
      start: new Date(at).toISOString(),
      end: new Date(at + size).toISOString(),
      results: byBucket.get(at) ?? [],
    });
  }
  return {
    object: 'usage',
    start: query.start.toISOString(),
    end: query.end.toISOString(),
    bucket: query.bucket,
    data,
  };
}
