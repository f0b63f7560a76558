/**
 * Webhooks: a key's own HTTPS endpoints, the events each one receives, its signing secret and
 * its delivery log (`/webhooks`), and the admin view of a key's endpoints. The request schemas
 * here are the ones webhooks/routes.ts validates.
 */
import { isSafeDisplayText, UNSAFE_DISPLAY_TEXT_MESSAGE } from '@switchboard/keys';
import {
  MAX_ENDPOINTS_PER_KEY,
  parseEventFilter,
  WEBHOOK_EVENT_TYPES,
  WebhookInputError,
} from '@switchboard/webhooks';
import { z } from 'zod';
import { keyErrors } from './responses.js';

export const tag = 'Webhooks' as const;
export const webhooksSurface = { tag, auth: 'apiKey' } as const;

/** What every `/webhooks` call can fail with: the store may be unreachable, or webhooks off. */
export const webhookErrors = [...keyErrors, 'unavailable'] as const;

/** The longest endpoint URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const url = z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH).meta({
  description:
    'Where events are POSTed: `https://` (an `http://` URL only for a host the operator exempts), no user name or password. The host is resolved when the URL is registered and again at every attempt; loopback, private, link-local, CGNAT, metadata and cluster addresses are refused (`400 url_not_allowed`).',
  example: 'https://example.com/hooks/switchboard',
});

/**
 * The filter is checked by the rules the senders match with, so a type they would never deliver
 * is refused at registration rather than silently never matching.
 */
const events = z
  .array(
    z
      .string()
      .meta({ description: `An event type (${WEBHOOK_EVENT_TYPES.join(', ')}), \`<area>.*\` or \`*\`.` }),
  )
  .superRefine((entries, ctx) => {
    try {
      parseEventFilter(entries);
    } catch (error) {
      if (!(error instanceof WebhookInputError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
    }
  })
  .meta({
    description:
      'The event types the endpoint receives: exact types, `<area>.*` patterns (`animate.job.*`, `browser.*`, `usage.quota.*`) or `*`; left out or empty = every type. `webhook.test` and `webhook.endpoint.disabled` always reach it.',
    example: ['animate.job.succeeded', 'animate.job.failed'],
  });

// The characters are checked before trimming, so one at either end is refused, not dropped.
const description = z
  .string()
  .refine(isSafeDisplayText, UNSAFE_DISPLAY_TEXT_MESSAGE)
  .trim()
  .max(500)
  .nullable()
  .meta({ description: 'A note for people (at most 500 characters); `null` = none.' });

const EndpointStatus = z
  .enum(['enabled', 'disabled'])
  .meta({ id: 'WebhookEndpointStatus', description: 'Only enabled endpoints get deliveries.' });

export const CreateWebhookRequest = z
  .object({ url, events: events.optional(), description: description.optional() })
  .meta({ id: 'CreateWebhookRequest' });

export const UpdateWebhookRequest = z
  .object({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    status: EndpointStatus.optional().meta({
      description: '`enabled` also clears a disabled endpoint’s reason and its failing streak.',
    }),
  })
  .meta({ id: 'UpdateWebhookRequest', description: 'Any of the fields; those left out keep their value.' });

export const RotateWebhookSecretRequest = z
  .object({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(86_400)
      .meta({ description: 'How long the old secret keeps signing beside the new one.' }),
  })
  .meta({ id: 'RotateWebhookSecretRequest' });

const endpointFields = {
  id: z.string().meta({ example: 'wh_01JDQ8Z6X1V3K0M4N5P6Q7R8S9' }),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  status: EndpointStatus,
  disabled_reason: z.enum(['gone', 'failing', 'owner']).nullable().meta({
    description:
      'Why a disabled endpoint is: `gone` (it answered 410), `failing` (every delivery failed for 5 days) or `owner` (disabled by a `PATCH`); `null` while enabled.',
  }),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
};

export const WebhookEndpoint = z
  .object(endpointFields)
  .meta({ id: 'WebhookEndpoint', description: 'An endpoint, never with its secret.' });

export const WebhookEndpointList = z.object({ data: z.array(WebhookEndpoint) }).meta({
  id: 'WebhookEndpointList',
  description: `The key's endpoints (at most ${MAX_ENDPOINTS_PER_KEY}), oldest first.`,
});

const secret = z.string().meta({
  description:
    'The signing secret (`whsec_<base64>`), shown only in this answer: verify each delivery with it (Standard Webhooks).',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
});

export const CreatedWebhookEndpoint = z
  .object({ ...endpointFields, secret })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const RotatedWebhookSecret = z
  .object({ id: z.string().meta({ description: "The endpoint's id." }), secret })
  .meta({ id: 'RotatedWebhookSecret' });

export const WebhookTestQueued = z
  .object({
    event_id: z.string().meta({
      description: 'The `webhook.test` event (its `webhook-id` header); its delivery shows in the log.',
      example: 'evt_01JDQ8Z6X1V3K0M4N5P6Q7R8S9',
    }),
  })
  .meta({ id: 'WebhookTestQueued' });

export const DeliveryStatus = z
  .enum(['pending', 'succeeded', 'failed'])
  .meta({ id: 'WebhookDeliveryStatus', description: '`pending` until a 2xx or the last retry.' });

export const WebhookDelivery = z
  .object({
    id: z.string().meta({ example: 'whd_01JDQ8Z6X1V3K0M4N5P6Q7R8S9' }),
    event_id: z.string().meta({ description: 'The `webhook-id` every attempt of this delivery carries.' }),
    type: z.string().meta({ description: 'The event type.' }),
    status: DeliveryStatus,
    attempts: z.number().int().min(0),
    response_status: z.number().int().nullable().meta({ description: "The last attempt's HTTP status." }),
    response_ms: z.number().int().nullable().meta({ description: "The last attempt's time to the answer." }),
    error: z
      .string()
      .nullable()
      .meta({ description: 'Why the last attempt failed (timeout, refused address, redirect, …).' }),
    created_at: z.iso.datetime(),
    next_attempt_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When a pending delivery is tried next.' }),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryPage = z
  .object({
    data: z.array(WebhookDelivery),
    has_more: z.boolean().meta({ description: 'Whether `after=<last id>` has more.' }),
  })
  .meta({ id: 'WebhookDeliveryPage', description: 'Newest first; kept 30 days.' });

export const DeliveryQuery = z.object({
  status: DeliveryStatus.optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .meta({ description: 'At most this many deliveries (1–100, default 20).' }),
  after: z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'A delivery id from the previous page: the page continues after it.' }),
});

export const WebhookPath = z.object({ id: z.string().meta({ description: 'The endpoint id (`wh_…`).' }) });
export const DeliveryPath = z.object({
  id: z.string().meta({ description: 'The endpoint id (`wh_…`).' }),
  delivery_id: z.string().meta({ description: 'The delivery id (`whd_…`).' }),
});

/** The admin view: each endpoint of a key with its latest deliveries. */
export const KeyWebhooks = z
  .object({
    data: z.array(
      z.object({
        ...endpointFields,
        recent_deliveries: z
          .array(WebhookDelivery)
          .meta({ description: 'Its 10 most recent deliveries, newest first.' }),
      }),
    ),
  })
  .meta({ id: 'KeyWebhooks', description: "A key's endpoints, each with its 10 most recent deliveries." });
