import type { DeliveryView, WebhookEndpoint } from '@switchboard/webhooks';

/**
 * An endpoint as the API shows it, fields in the documented order; its key id stays out (the
 * caller is that key) and its secrets never reach a view.
 */
export function endpointView(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabled_reason as 'gone' | 'failing' | 'owner' | null,
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  };
}

/** A row of the delivery log, fields in the documented order. */
export function deliveryView(delivery: DeliveryView) {
  return {
    id: delivery.id,
    event_id: delivery.event_id,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attempts,
    response_status: delivery.response_status,
    response_ms: delivery.response_ms,
    error: delivery.error,
    created_at: delivery.created_at,
    next_attempt_at: delivery.next_attempt_at,
  };
}
