import type { Logger } from '@switchboard/telemetry';
import type { SecretBox } from './secrets.js';

/** At most this many endpoints per key (API §11). */
export const MAX_ENDPOINTS_PER_KEY = 20;

export type EndpointStatus = 'enabled' | 'disabled';
export type DisabledReason = 'gone' | 'failing' | 'owner';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** An endpoint as the API shows it (never its secrets). */
export interface WebhookEndpoint {
  id: string;
  key_id: string;
  url: string;
  events: string[];
  description: string | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface EndpointInput {
  url: string;
  events: string[];
  description: string | null;
}

export interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: EndpointStatus;
}

/** One row of an endpoint's delivery log. */
export interface DeliveryView {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  response_ms: number | null;
  error: string | null;
  created_at: string;
  next_attempt_at: string | null;
}

export interface DeliveryPage {
  data: DeliveryView[];
  has_more: boolean;
}

export interface DeliveryQuery {
  status?: DeliveryStatus;
  /** 1–100, default 20. */
  limit?: number;
  /** A delivery id: the page starts after it (newest first). */
  after?: string;
}

/** An event of a key, as it reaches the store. */
export interface StoredEvent {
  id: string;
  key_id: string;
  type: string;
  /** ISO 8601. */
  occurred_at: string;
  data: Record<string, unknown>;
  traceparent?: string;
}

/** A delivery a sender holds the lease on, with everything it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  key_id: string;
  url: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The exact body bytes: signed and sent as they are, the same on every attempt. */
  payload: string;
  /** The endpoint's active secrets, opened. */
  secrets: string[];
  traceparent?: string;
  /** When the event occurred (ISO 8601). */
  created_at: string;
}

export interface ClaimOptions {
  limit: number;
  /** Deliveries in flight per endpoint across every sender. */
  perEndpoint: number;
  /** Deliveries in flight per key across every sender: a key's hanging endpoints together hold at most this many. */
  perKey: number;
  leaseMs: number;
}

export interface AttemptOutcome {
  ok: boolean;
  responseStatus: number | null;
  responseMs: number | null;
  error: string | null;
  responseBody: string | null;
  /** When to try again; null = no more tries, the delivery is failed. */
  nextAttemptAt: Date | null;
  /** The endpoint answered 410 Gone: disable it. */
  gone: boolean;
}

export interface AttemptResult {
  disabledEndpoint?: WebhookEndpoint;
}

export interface WebhookStoreOptions {
  /** postgresql:// URL, credentials included. */
  connectionString: string;
  secretBox: SecretBox;
  logger?: Logger;
  poolSize?: number;
  /** An endpoint failing this long without a success is disabled (default 5 days). */
  disableAfterMs?: number;
}
