import type { NatsConnection } from 'nats';
import type { Logger } from '@switchboard/telemetry';
import { traceHeaders } from './trace.js';

/** Publishes `switchboard.events.<area>.<event>` (JSON bodies); an event never fails a request. */
export class EventPublisher {
  constructor(
    private readonly nats: NatsConnection,
    private readonly logger: Logger,
  ) {}

  publish(event: string, body: Record<string, unknown>): void {
    try {
      this.nats.publish(
        `switchboard.events.${event}`,
        JSON.stringify({ ...body, at: new Date().toISOString() }),
        // Whoever acts on the event (a webhook delivery) continues the trace that caused it.
        { headers: traceHeaders() },
      );
    } catch (error) {
      this.logger.warn({ err: error, event }, 'event not published');
    }
  }
}
