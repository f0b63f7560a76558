import type { DeliveryStatus, DeliveryView, EndpointStatus, WebhookEndpoint } from './types.js';

export type { Queryable } from '@switchboard/postgres';

export interface EndpointRow {
  id: string;
  key_id: string;
  url: string;
  events: string[];
  description: string | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export const ENDPOINT_COLUMNS =
  'id, key_id, url, events, description, status, disabled_reason, created_at, updated_at';

export function endpointView(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    key_id: row.key_id,
    url: row.url,
    events: row.events,
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  response_ms: number | null;
  error: string | null;
  created_at: Date;
  next_attempt_at: Date | null;
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    response_ms: row.response_ms,
    error: row.error,
    created_at: row.created_at.toISOString(),
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
  };
}
