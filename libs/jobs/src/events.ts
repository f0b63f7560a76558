import type { EventPublisher } from '@switchboard/events';
import { jobView } from './job-view.js';
import type { JobRecord } from './record.js';

/**
 * `animate.job.<status>`, one per state change. Published only by whoever made the transition
 * land (its compare-and-set won), so each happens once per job however many processes raced for it.
 * `data` is the job as the API shows it, which webhooks deliver as they are.
 */
export function publishJobEvent(events: EventPublisher | undefined, record: JobRecord): void {
  events?.publish(`animate.job.${record.status}`, {
    job_id: record.job_id,
    key_id: record.owner_key_id,
    backend: record.backend,
    status: record.status,
    attempts: record.attempts,
    ...(record.error ? { error_code: record.error.code } : {}),
    data: jobView(record),
  });
}
