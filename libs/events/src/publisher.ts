import type { NatsConnection } from 'nats';
import type { Logger } from '@switchboard/telemetry';
import { newEventId } from './ids.js';
import { traceHeaders } from './trace.js';

/**
 * Publishes `switchboard.events.<area>.<event>` (JSON bodies); an event never fails a request.
 * Every body gets an `id` (`evt_…`, time-sortable) and `at`: whoever keeps events (the webhook
 * sender) de-duplicates redeliveries by the id, and receivers see the same id on every attempt.
 */
export class EventPublisher {
  constructor(
    private readonly nats: NatsConnection,
    private readonly logger: Logger,
  ) {}

  publish(event: string, body: Record<string, unknown>): void {
    const now = Date.now();
    try {
      this.nats.publish(
        `switchboard.events.${event}`,
        JSON.stringify({ ...body, id: newEventId(now), at: new Date(now).toISOString() }),
        // Whoever acts on the event (a webhook delivery) continues the trace that caused it.
        { headers: traceHeaders() },
      );
    } catch (error) {
      this.logger.warn({ err: error, event }, 'event not published');
    }
  }
}
