export { WEBHOOK_EVENT_TYPES, parseEventFilter, matchesFilter, isDeliverable } from './event-types.js';
export { newEventId, newEndpointId, newDeliveryId, timeSortableId } from './ids.js';
export { newSecret, SecretBox } from './secrets.js';
export { signatureHeader } from './signature.js';
export { parseRetrySchedule, parseDuration, DEFAULT_RETRY_SCHEDULE } from './retry-schedule.js';
export { WebhookInputError } from './errors.js';
export { WebhookStore } from './store.js';
export * from './types.js';
export { checkWebhookUrl, webhookAllowedHosts } from './target.js';
