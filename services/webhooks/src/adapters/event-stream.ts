// The cluster's events, kept: a JetStream stream over every event subject, read by the senders'
// shared durable consumer. An event published while no sender runs (or while PostgreSQL is down)
// waits in the stream; it is acknowledged only once the store has queued its deliveries, so a
// sender killed between the two leaves it to be redelivered — and the store, keyed by the
// event's id, queues it once.
import { retryCreationRace } from '@switchboard/events';
import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  nanos,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { defaultResources, type ClusterResources } from '@switchboard/broker-auth';
import type { Logger } from '@switchboard/telemetry';
import { isDeliverable, newEventId, type StoredEvent, type WebhookStore } from '@switchboard/webhooks';
import type { WebhooksMetrics } from '../metrics.js';

export const EVENTS_CONSUMER = 'webhooks';
const EVENTS_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
const ACK_WAIT_MS = 30_000;
const MAX_ACK_PENDING = 1000;
/** An event the store could not take comes back after this. */
export const STORE_DOWN_RETRY_MS = 5_000;

const STREAM_EXISTS = 10058;
const CONSUMER_EXISTS = 10148;

const apiCode = (error: unknown): number | undefined =>
  (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;

type EventNames = Pick<ClusterResources, 'eventsStream' | 'eventsPrefix'>;

/**
 * Creates the stream and the sender's consumer, or brings them to these settings. Every sender
 * runs it at start; the local runner starts a sender before the gateway so no event is missed.
 */
export async function ensureEventStream(
  nc: NatsConnection,
  names: EventNames = defaultResources,
): Promise<void> {
  // Senders starting together create the same stream.
  await retryCreationRace(async () => setUp(await nc.jetstreamManager(), names));
}

async function setUp(jsm: JetStreamManager, names: EventNames): Promise<void> {
  const stream = {
    name: names.eventsStream,
    subjects: [`${names.eventsPrefix}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(EVENTS_MAX_AGE_MS),
  };
  try {
    await jsm.streams.add(stream);
  } catch (error) {
    if (apiCode(error) !== STREAM_EXISTS) throw error;
    await jsm.streams.update(stream.name, { subjects: stream.subjects, max_age: stream.max_age });
  }
  const consumer = {
    durable_name: EVENTS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ACK_WAIT_MS),
    max_ack_pending: MAX_ACK_PENDING,
    // Never given up on: an event is acknowledged once queued, or waits for the store.
    max_deliver: -1,
  };
  const existing = await jsm.consumers.info(stream.name, EVENTS_CONSUMER).catch(() => null);
  if (existing === null) {
    try {
      await jsm.consumers.add(stream.name, consumer);
    } catch (error) {
      if (apiCode(error) !== CONSUMER_EXISTS) throw error;
    }
  } else if (
    existing.config.ack_wait !== consumer.ack_wait ||
    existing.config.max_ack_pending !== consumer.max_ack_pending
  ) {
    await jsm.consumers.update(stream.name, EVENTS_CONSUMER, {
      ack_wait: consumer.ack_wait,
      max_ack_pending: consumer.max_ack_pending,
    });
  }
}

/**
 * A received event as the store keeps it, or null when it is not for webhooks: not a deliverable
 * type, or not a key's. `subject` is `<prefix>.<type>`.
 */
export function storedEventOf(
  subject: string,
  body: unknown,
  traceparent: string | undefined,
  prefix = defaultResources.eventsPrefix,
): StoredEvent | null {
  if (!subject.startsWith(`${prefix}.`)) return null;
  const type = subject.slice(prefix.length + 1);
  if (!isDeliverable(type) || type.startsWith('webhook.')) return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { key_id: keyId, id, at, data, ...rest } = body as Record<string, unknown>;
  if (typeof keyId !== 'string' || keyId === '') return null;
  const occurredAt = typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? at : new Date().toISOString();
  return {
    // Publishers name every event; one that did not gets a name here (redelivery may then queue it twice).
    id: typeof id === 'string' && /^evt_[0-9A-Za-z]{1,64}$/.test(id) ? id : newEventId(),
    key_id: keyId,
    type,
    occurred_at: occurredAt,
    data: isRecord(data) ? data : rest,
    ...(traceparent ? { traceparent } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface EventIntakeOptions {
  nc: NatsConnection;
  store: Pick<WebhookStore, 'enqueueEvent'>;
  metrics: WebhooksMetrics;
  logger: Logger;
  names?: EventNames;
  /** Events pulled (and queued concurrently) at a time. */
  batch?: number;
}

/** Pulls events from the consumer and queues each key's deliverable ones in the store. */
export class EventIntake {
  private stopping = false;
  private loop: Promise<void> | undefined;
  private current: ConsumerMessages | undefined;

  constructor(private readonly o: EventIntakeOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops pulling; events handed over but not yet queued are finished first. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.close();
    await this.loop;
  }

  private async run(): Promise<void> {
    const names = this.o.names ?? defaultResources;
    while (!this.stopping) {
      try {
        const consumer = await this.o.nc.jetstream().consumers.get(names.eventsStream, EVENTS_CONSUMER);
        while (!this.stopping) {
          const messages = await consumer.fetch({ max_messages: this.o.batch ?? 64, expires: 1_000 });
          this.current = messages;
          const work: Promise<void>[] = [];
          for await (const message of messages) work.push(this.take(message, names.eventsPrefix));
          await Promise.all(work);
        }
      } catch (error) {
        if (this.stopping) break;
        this.o.logger.warn({ err: error }, 'reading the events stream failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async take(message: JsMsg, prefix: string): Promise<void> {
    let event: StoredEvent | null = null;
    try {
      event = storedEventOf(
        message.subject,
        message.json(),
        message.headers?.get('traceparent') || undefined,
        prefix,
      );
    } catch {
      // Not JSON: nothing any receiver could be sent.
    }
    if (event === null) {
      this.o.metrics.events.inc({ result: 'ignored' });
      message.ack();
      return;
    }
    try {
      await this.o.store.enqueueEvent(event);
      this.o.metrics.events.inc({ result: 'queued' });
      message.ack();
    } catch (error) {
      this.o.logger.warn({ err: error, event_id: event.id }, 'event not queued; it comes back later');
      message.nak(STORE_DOWN_RETRY_MS);
    }
  }
}
