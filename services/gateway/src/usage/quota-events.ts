import type { EventPublisher } from '@switchboard/events';
import type { QuotaNotice } from '@switchboard/usage';

/**
 * Publishes a quota notice as `usage.quota.warning` or `usage.quota.exceeded`. The store hands out
 * each notice once per key, meter and period, so every replica may publish what it is given.
 * `data` is the quota and its usage, what webhooks deliver; `updated_at` orders notices that
 * arrive out of order.
 */
export function publishQuotaNotice(events: EventPublisher, { kind, ...body }: QuotaNotice): void {
  const { meter, limit, period, used, period_start, period_end } = body;
  events.publish(`usage.quota.${kind}`, {
    ...body,
    data: { meter, limit, period, used, period_start, period_end, updated_at: new Date().toISOString() },
  });
}
