import { WebhookInputError } from './errors.js';

/** Every type a webhook can receive: a key's own events (API §8) and the webhooks' own. */
export const WEBHOOK_EVENT_TYPES: readonly string[] = Object.freeze([
  'animate.job.queued',
  'animate.job.running',
  'animate.job.succeeded',
  'animate.job.failed',
  'animate.job.canceled',
  'browser.session.created',
  'browser.session.closed',
  'browser.session.expired',
  'browser.screenshot.captured',
  'browser.pdf.created',
  'browser.scrape.completed',
  'usage.quota.warning',
  'usage.quota.exceeded',
  'webhook.test',
  'webhook.endpoint.disabled',
]);

const DELIVERABLE_PREFIXES = ['browser.', 'animate.job.', 'usage.quota.'];
const WEBHOOK_PREFIX = 'webhook.';
const MAX_FILTER_ENTRIES = 64;

/** Whether an event of this type may go to webhooks at all (the caller also needs its key_id). */
export function isDeliverable(type: string): boolean {
  return (
    DELIVERABLE_PREFIXES.some((prefix) => type.startsWith(prefix)) ||
    type === 'webhook.test' ||
    type === 'webhook.endpoint.disabled'
  );
}

/** Prefixes a `<prefix>.*` pattern may name: every leading run of a known type's parts. */
const PATTERN_PREFIXES = new Set(
  WEBHOOK_EVENT_TYPES.flatMap((type) => {
    const parts = type.split('.');
    return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);

/**
 * An endpoint's `events` as the client sent it → the stored filter. Missing or empty means every
 * type (['*']); each entry is '*', a known type, or '<prefix>.*' over known types.
 */
export function parseEventFilter(input: unknown): string[] {
  if (input === undefined || input === null) return ['*'];
  if (!Array.isArray(input))
    throw new WebhookInputError('events', '`events` must be an array of event types.');
  if (input.length === 0) return ['*'];
  if (input.length > MAX_FILTER_ENTRIES) {
    throw new WebhookInputError('events', `\`events\` may list at most ${MAX_FILTER_ENTRIES} entries.`);
  }
  const filter: string[] = [];
  for (const entry of input) {
    if (typeof entry !== 'string' || !validEntry(entry)) {
      throw new WebhookInputError(
        'events',
        `Unknown event type ${JSON.stringify(entry)}; use '*', a type such as 'animate.job.succeeded' or a pattern such as 'browser.*'.`,
      );
    }
    if (!filter.includes(entry)) filter.push(entry);
  }
  return filter.includes('*') ? ['*'] : filter;
}

function validEntry(entry: string): boolean {
  if (entry === '*') return true;
  if (entry.endsWith('.*')) return PATTERN_PREFIXES.has(entry.slice(0, -2));
  return WEBHOOK_EVENT_TYPES.includes(entry);
}

/**
 * Whether an endpoint with this filter receives this type. The webhooks' own events (a test, an
 * endpoint disabled) are about the endpoints themselves, so no filter keeps them out.
 */
export function matchesFilter(filter: readonly string[], type: string): boolean {
  if (type.startsWith(WEBHOOK_PREFIX)) return true;
  return filter.some(
    (entry) =>
      entry === '*' || entry === type || (entry.endsWith('.*') && type.startsWith(entry.slice(0, -1))),
  );
}
