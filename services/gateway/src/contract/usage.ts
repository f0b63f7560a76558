/**
 * Usage and quotas: the meters, `GET /usage` (a key's own), `GET /admin/api/usage` (any key) and
 * a key's quotas as the admin API takes and shows them.
 */
import { capabilities, isMeter, meters, quotaPeriods, type Meter as MeterName } from '@switchboard/usage';
import { z } from 'zod';

export const Meter = z.enum(meters as [MeterName, ...MeterName[]]).meta({ id: 'Meter' });
export const QuotaPeriod = z
  .enum(quotaPeriods)
  .meta({ id: 'QuotaPeriod', description: 'A UTC calendar day or month.' });

export const Quota = z
  .object({
    limit: z.number().min(0).meta({ description: 'The most of the meter the key may use in one period.' }),
    period: QuotaPeriod,
  })
  .meta({ id: 'Quota' });

/**
 * Unknown meters are refused with the meter's path as `param` (`quotas.dollars`). They are looked
 * for in the raw object first: a record schema would drop a JSON "__proto__" key silently.
 */
export const KeyQuotas = z
  .preprocess(
    (value, ctx) => {
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const unknown = Object.keys(value).find((meter) => !isMeter(meter));
        if (unknown !== undefined) {
          ctx.issues.push({
            code: 'custom',
            path: [unknown],
            message: `${unknown.slice(0, 40)} is not a meter.`,
            input: value,
          });
        }
      }
      return value;
    },
    z.partialRecord(Meter, Quota.nullable()),
  )
  .meta({
    id: 'KeyQuotas',
    description:
      "The key's own quotas, per meter: a quota replaces the tier's for that meter, `null` removes the tier's.",
    example: { images: { limit: 100, period: 'day' }, output_tokens: null },
  });

export const KeyQuotaState = z
  .object({
    meter: Meter,
    limit: z.number(),
    period: QuotaPeriod,
    source: z
      .enum(['tier', 'key'])
      .meta({ description: "Whether the tier's policy or the key's own quotas set it." }),
    used: z.number().meta({ description: 'Settled usage in the current period.' }),
    reserved: z.number().meta({ description: 'Held by calls still running.' }),
    remaining: z.number().meta({ description: 'limit − used − reserved, never below 0.' }),
    period_start: z.iso.datetime(),
    period_end: z.iso.datetime(),
  })
  .meta({ id: 'KeyQuotaState' });

export const KeyQuotaStateList = z.object({ data: z.array(KeyQuotaState) }).meta({
  id: 'KeyQuotaStateList',
  description: "The key's effective quotas (its tier's with its own applied).",
});

const groupByValues = ['capability', 'model', 'meter', 'key_id'] as const;

const usageQueryFields = {
  start: z.iso.datetime({ offset: true }).optional().meta({
    description: 'ISO 8601 with an offset; default now − 7 days. Floored to the bucket (UTC).',
  }),
  end: z.iso.datetime({ offset: true }).optional().meta({
    description: 'ISO 8601 with an offset; default now. Ceiled to the bucket (UTC); after start.',
  }),
  bucket: z.enum(['hour', 'day']).optional().meta({ description: 'Default `day`. At most 1,000 buckets.' }),
};

export const UsageQuery = z
  .object({
    ...usageQueryFields,
    group_by: z.string().optional().meta({
      description:
        'Comma list of `capability`, `model`, `meter`; default all three. Results are always split by meter.',
    }),
  })
  .meta({ id: 'UsageQuery' });

export const AdminUsageQuery = z
  .object({
    ...usageQueryFields,
    key_id: z.string().optional().meta({ description: "One key's usage; default every key." }),
    group_by: z.string().optional().meta({
      description:
        'Comma list of `capability`, `model`, `meter`, `key_id`; default `capability,model,meter`. Always split by meter.',
    }),
  })
  .meta({ id: 'AdminUsageQuery' });

export const UsageResult = z
  .object({
    key_id: z.string().optional().meta({ description: 'Only when grouped by `key_id`.' }),
    capability: z.enum(capabilities).nullable(),
    model: z.string().nullable(),
    meter: Meter,
    value: z.number(),
  })
  .meta({ id: 'UsageResult' });

export const UsageBucket = z
  .object({ start: z.iso.datetime(), end: z.iso.datetime(), results: z.array(UsageResult) })
  .meta({ id: 'UsageBucket' });

export const UsageReport = z
  .object({
    object: z.literal('usage'),
    start: z.iso.datetime(),
    end: z.iso.datetime(),
    bucket: z.enum(['hour', 'day']),
    data: z.array(UsageBucket).meta({ description: 'Every bucket, empty ones included, oldest first.' }),
  })
  .meta({
    id: 'UsageReport',
    example: {
      object: 'usage',
      start: '2026-11-20T00:00:00Z',
      end: '2026-11-21T00:00:00Z',
      bucket: 'day',
      data: [
        {
          start: '2026-11-20T00:00:00Z',
          end: '2026-11-21T00:00:00Z',
          results: [{ capability: 'diffusion', model: 'sd-turbo', meter: 'images', value: 4 }],
        },
      ],
    },
  });

export const usageGroupBy = groupByValues;

export const usageSurface = { tag: 'Usage', auth: 'apiKey' } as const;
