import { isMeter, type Meter } from './meters.js';

/**
 * Quotas: a limit per meter over a UTC calendar day or month. A tier policy sets a key's
 * defaults; the key's own `quotas` replace them meter by meter (null removes the tier's).
 */
export const quotaPeriods = ['day', 'month'] as const;
export type QuotaPeriod = (typeof quotaPeriods)[number];

export interface Quota {
  limit: number;
  period: QuotaPeriod;
}

export type Quotas = Partial<Record<Meter, Quota>>;
/** A key's own quotas: a Quota replaces the tier's for that meter, null removes it. */
export type QuotaOverrides = Partial<Record<Meter, Quota | null>>;

export function effectiveQuotas(tier: Quotas | undefined, key: QuotaOverrides | undefined): Quotas {
  const merged: Quotas = { ...tier };
  for (const [meter, quota] of Object.entries(key ?? {}) as [Meter, Quota | null][]) {
    if (quota === null) delete merged[meter];
    else merged[meter] = quota;
  }
  return merged;
}

/** The UTC calendar period that `at` falls in: [start, end). */
export function periodBounds(period: QuotaPeriod, at: Date): { start: Date; end: Date } {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  if (period === 'month') {
    return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
  }
  const day = at.getUTCDate();
  return { start: new Date(Date.UTC(year, month, day)), end: new Date(Date.UTC(year, month, day + 1)) };
}

/** Whole seconds until the period of `at` ends (at least 1): a refusal's Retry-After. */
export function secondsToPeriodEnd(period: QuotaPeriod, at: Date): number {
  return Math.max(1, Math.ceil((periodBounds(period, at).end.getTime() - at.getTime()) / 1000));
}

/** Where a quota document is wrong: the path of the field at fault, for the error's `param`. */
export class QuotaShapeError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks a `quotas` object as an API body or a tier policy gives it. `allowNull` admits null
 * (removal of the tier's quota) for a key's overrides. Throws QuotaShapeError naming the field.
 */
export function parseQuotas(value: unknown, field: string, allowNull: true): QuotaOverrides;
export function parseQuotas(value: unknown, field: string, allowNull: false): Quotas;
export function parseQuotas(value: unknown, field: string, allowNull: boolean): QuotaOverrides {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new QuotaShapeError(field, `${field} must be an object of meter → {limit, period}.`);
  }
  const quotas: QuotaOverrides = {};
  for (const [meter, quota] of Object.entries(value)) {
    const param = `${field}.${meter}`;
    if (!isMeter(meter)) throw new QuotaShapeError(param, `${meter} is not a meter.`);
    if (quota === null && allowNull) {
      quotas[meter] = null;
      continue;
    }
    if (typeof quota !== 'object' || quota === null || Array.isArray(quota)) {
      throw new QuotaShapeError(param, `${param} must be {limit, period}${allowNull ? ' or null' : ''}.`);
    }
    const { limit, period } = quota as Record<string, unknown>;
    if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0) {
      throw new QuotaShapeError(`${param}.limit`, `${param}.limit must be a number ≥ 0.`);
    }
    if (period !== 'day' && period !== 'month') {
      throw new QuotaShapeError(`${param}.period`, `${param}.period must be "day" or "month".`);
    }
    quotas[meter] = { limit, period };
  }
  return quotas;
}
