// Reading usage back through the API (GET /usage, GET /admin/api/usage) and waiting for it to show,
// as a key holder and the operator see it.
import { readFile } from 'node:fs/promises';
import type { NatsConnection } from 'nats';
import { openUsageStore, type UsageStore } from '@switchboard/usage';
import { admin, bearer, type CreatedKey } from './admin.js';
import type { GatewayProcess } from './gateway.js';
import { sleep, type Stack } from './stack.js';

export interface UsageResultView {
  key_id?: string;
  capability: string | null;
  model: string | null;
  meter: string;
  value: number;
}

export interface UsageBucketView {
  start: string;
  end: string;
  results: UsageResultView[];
}

export interface UsageReportView {
  object: string;
  start: string;
  end: string;
  bucket: string;
  data: UsageBucketView[];
}

/** The API promises recorded usage in GET /usage within 5 s of the work ending. */
export const USAGE_VISIBLE_MS = 5_000;

/** GET /usage as `key`, with `query` as its query string. */
export function getUsage(
  gateway: GatewayProcess,
  key: string,
  query: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gateway.url}/usage?${new URLSearchParams(query).toString()}`, { headers: bearer(key) });
}

/** GET /admin/api/usage with the admin token. */
export function getAdminUsage(
  gateway: GatewayProcess,
  query: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gateway.url}/admin/api/usage?${new URLSearchParams(query).toString()}`, {
    headers: bearer(gateway.adminToken),
  });
}

async function reportOf(res: Response): Promise<UsageReportView> {
  if (res.status !== 200) throw new Error(`usage: ${res.status} ${await res.text()}`);
  return (await res.json()) as UsageReportView;
}

/** Yesterday 00:00 to tomorrow 00:00 (UTC): a window that holds everything a test did today. */
export function aroundToday(now = new Date()): { start: string; end: string } {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return {
    start: new Date(day - 86_400_000).toISOString(),
    end: new Date(day + 2 * 86_400_000).toISOString(),
  };
}

/** The key's own usage around today, split by capability, model and meter. */
export async function usageAroundToday(gateway: GatewayProcess, key: string): Promise<UsageReportView> {
  return reportOf(
    await getUsage(gateway, key, { ...aroundToday(), bucket: 'day', group_by: 'capability,model,meter' }),
  );
}

/** Any key's usage around today as the operator sees it, split by capability, model and meter. */
export async function adminUsageAroundToday(
  gateway: GatewayProcess,
  keyId: string,
): Promise<UsageReportView> {
  return reportOf(
    await getAdminUsage(gateway, {
      ...aroundToday(),
      bucket: 'day',
      group_by: 'capability,model,meter',
      key_id: keyId,
    }),
  );
}

/** `capability/model/meter` (with `key_id/` first when grouped by it) → value summed over buckets. */
export function totals(report: UsageReportView): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const bucket of report.data) {
    for (const r of bucket.results) {
      const name = `${r.key_id === undefined ? '' : `${r.key_id}/`}${r.capability}/${r.model}/${r.meter}`;
      sums[name] = (sums[name] ?? 0) + r.value;
    }
  }
  return sums;
}

/** Equal up to the rounding of summed decimals (megapixel-steps, seconds). */
export const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

function sameTotals(seen: Record<string, number>, expected: Record<string, number>): boolean {
  const names = new Set([...Object.keys(seen), ...Object.keys(expected)]);
  return [...names].every((name) => close(seen[name] ?? 0, expected[name] ?? 0));
}

/**
 * Polls `read` until `accept(totals)` holds, for USAGE_VISIBLE_MS (the API's promise) unless
 * told otherwise; fails with what was last seen. Returns the accepted totals.
 */
export async function untilUsage(
  read: () => Promise<UsageReportView>,
  accept: (seen: Record<string, number>) => boolean,
  what: string,
  ms = USAGE_VISIBLE_MS,
): Promise<Record<string, number>> {
  let seen: Record<string, number> | undefined;
  let failure: unknown;
  for (const started = Date.now(); ; await sleep(100)) {
    // A read that fails (a replica still reconnecting after a restart) is one more try.
    try {
      seen = totals(await read());
      failure = undefined;
      if (accept(seen)) return seen;
    } catch (error) {
      failure = error;
    }
    if (Date.now() - started > ms) {
      const last = failure instanceof Error ? failure.message : JSON.stringify(seen);
      throw new Error(`usage did not show ${what} within ${ms} ms; last seen ${last}`);
    }
  }
}

/** untilUsage for exact totals (every meter the report holds, none missing, none extra). */
export function untilTotals(
  read: () => Promise<UsageReportView>,
  expected: Record<string, number>,
  ms = USAGE_VISIBLE_MS,
): Promise<Record<string, number>> {
  return untilUsage(read, (seen) => sameTotals(seen, expected), JSON.stringify(expected), ms);
}

export interface QuotaEventView {
  subject: string;
  key_id: string;
  meter: string;
  limit: number;
  period: string;
  used: number;
}

/** Collects `switchboard.events.usage.quota.*` events as the operator receives them. */
export function collectQuotaEvents(nc: NatsConnection): QuotaEventView[] {
  const seen: QuotaEventView[] = [];
  const sub = nc.subscribe('switchboard.events.usage.quota.*');
  void (async () => {
    for await (const msg of sub) {
      const body = JSON.parse(new TextDecoder().decode(msg.data)) as Omit<QuotaEventView, 'subject'>;
      seen.push({ ...body, subject: msg.subject.split('.').pop()! });
    }
  })();
  return seen;
}

/** Seconds from `at` to the next UTC midnight: a daily quota's Retry-After. */
export function secondsToUtcMidnight(at = new Date()): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return (next - at.getTime()) / 1000;
}

/** An enterprise key without a rate limit whose own `quotas` are `quotas` (§7's create call). */
export async function createKeyWithQuotas(
  gateway: GatewayProcess,
  quotas: Record<string, { limit: number; period: 'day' | 'month' } | null>,
): Promise<CreatedKey> {
  const res = await admin(gateway, 'POST', '/keys', {
    name: 'metered',
    tier: 'enterprise',
    rate_limit_per_minute: null,
    quotas,
  });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedKey;
}

/**
 * The usage store the stack's gateways write to, opened by the test to write records of known
 * times (what the gateways would have written after work done then) or to read them back.
 */
export async function openTestUsageStore(stack: Pick<Stack, 'gatewayEnv'>): Promise<UsageStore> {
  const env = stack.gatewayEnv;
  const url =
    env.USAGE_DATABASE_URL ??
    (env.USAGE_DATABASE_URL_FILE === undefined
      ? undefined
      : (await readFile(env.USAGE_DATABASE_URL_FILE, 'utf8')).trim());
  if (url === undefined) throw new Error('the stack gives its gateways no USAGE_DATABASE_URL');
  return openUsageStore({ url });
}
