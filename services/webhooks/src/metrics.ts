import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed';
export type AttemptResult = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'refused' | 'error';

export function createWebhooksMetrics(registry: Registry) {
  const registers = [registry];
  return {
    deliveries: new Counter({
      name: 'webhooks_deliveries_total',
      help: 'Attempts ended here, by what became of their delivery (succeeded, retry later, failed for good).',
      labelNames: ['outcome'],
      registers,
    }),
    attempts: new Counter({
      name: 'webhooks_attempts_total',
      help: 'Attempts by result: the response class, a timeout, refused by the address guard, or another error.',
      labelNames: ['result'],
      registers,
    }),
    attemptSeconds: new Histogram({
      name: 'webhooks_attempt_seconds',
      help: 'One attempt, from connecting to the end of the (capped) response.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers,
    }),
    deliveryLatency: new Histogram({
      name: 'webhooks_delivery_latency_seconds',
      help: 'From the event to its successful delivery, retries included.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 86_400],
      registers,
    }),
    pending: new Gauge({
      name: 'webhooks_pending',
      help: 'Deliveries waiting for an attempt (cluster-wide, from the store).',
      registers,
    }),
    events: new Counter({
      name: 'webhooks_events_total',
      help: 'Events taken from the stream: queued for delivery, or ignored (not a key’s deliverable event).',
      labelNames: ['result'],
      registers,
    }),
  };
}

export type WebhooksMetrics = ReturnType<typeof createWebhooksMetrics>;
