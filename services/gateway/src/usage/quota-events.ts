import type { EventPublisher } from '@switchboard/events';
import type { QuotaNotice } from '@switchboard/usage';

/**
 * Publishes a quota notice as `usage.quota.warning` or `usage.quota.exceeded`. The store hands out
 * each notice once per key, meter and period, so every replica may publish what it is given.
 */
export function publishQuotaNotice(events: EventPublisher, { kind, ...body }: QuotaNotice): void {
  events.publish(`usage.quota.${kind}`, { ...body });
}
