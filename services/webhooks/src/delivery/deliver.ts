// One attempt of one claimed delivery, start to end: signed as Standard Webhooks v1, sent through
// the address guard, judged (2xx within the time is the only success) and recorded with when to
// try again. The store keeps the outcome only while this sender still holds the lease.
import { extractTraceContext, withSpanIn, type Logger } from '@switchboard/telemetry';
import { signatureHeader, type ClaimedDelivery, type WebhookStore } from '@switchboard/webhooks';
import type { AttemptResult, WebhooksMetrics } from '../metrics.js';
import { postOnce, type AttemptGuard, type HttpAttemptResult } from './http-attempt.js';
import { nextAttemptAt } from './schedule.js';

export const USER_AGENT = 'Switchboard-Webhooks/1';

export interface DeliverDeps {
  store: Pick<WebhookStore, 'recordAttempt'>;
  /** This sender's lease owner name. */
  owner: string;
  guard: AttemptGuard;
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  metrics: WebhooksMetrics;
  logger: Logger;
  /** Extra trust anchors for https (tests' own CA). */
  ca?: string | Buffer;
}

/** Makes one attempt of `delivery` and records it; never throws. */
export async function deliverOnce(delivery: ClaimedDelivery, deps: DeliverDeps): Promise<void> {
  const parent = extractTraceContext({
    get: (key) => (key === 'traceparent' ? (delivery.traceparent ?? '') : ''),
  });
  // The host only: a URL's path or query may carry the receiver's own secret.
  const attributes = {
    'webhook.delivery_id': delivery.id,
    'webhook.event_id': delivery.event_id,
    'webhook.endpoint_id': delivery.endpoint_id,
    'webhook.attempt': delivery.attempts + 1,
    'server.address': hostOf(delivery.url),
  };
  await withSpanIn(parent, 'webhooks', 'webhooks.deliver', attributes, async (span) => {
    const result = await send(delivery, deps);
    const outcome = judge(delivery, result, deps.retryScheduleMs);
    span.setAttribute('webhook.result', outcome.result);
    if (result.status !== null) span.setAttribute('http.response.status_code', result.status);
    record(deps.metrics, delivery, result, outcome);
    try {
      const recorded = await deps.store.recordAttempt(deps.owner, delivery.id, {
        ok: outcome.ok,
        responseStatus: result.status,
        responseMs: result.ms,
        error: outcome.error,
        responseBody: result.body,
        nextAttemptAt: outcome.nextAttemptAt,
        gone: outcome.gone,
      });
      if (recorded.disabledEndpoint) {
        deps.logger.info(
          {
            endpoint_id: recorded.disabledEndpoint.id,
            key_id: recorded.disabledEndpoint.key_id,
            reason: recorded.disabledEndpoint.disabled_reason,
          },
          'webhook endpoint disabled',
        );
      }
    } catch (error) {
      // The lease runs out and another attempt is made: at least once, never lost.
      deps.logger.warn({ err: error, delivery_id: delivery.id }, 'attempt not recorded; it will be retried');
    }
  });
}

function send(delivery: ClaimedDelivery, deps: DeliverDeps): Promise<HttpAttemptResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': delivery.event_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(delivery.secrets, delivery.event_id, timestamp, delivery.payload),
  };
  return postOnce(delivery.url, delivery.payload, headers, {
    guard: deps.guard,
    timeoutMs: deps.timeoutMs,
    ...(deps.ca ? { ca: deps.ca } : {}),
  });
}

interface Judgement {
  ok: boolean;
  gone: boolean;
  nextAttemptAt: Date | null;
  error: string | null;
  result: AttemptResult;
}

/** What an attempt's result means for its delivery. */
export function judge(
  delivery: Pick<ClaimedDelivery, 'attempts'>,
  result: HttpAttemptResult,
  retryScheduleMs: readonly number[],
  now = new Date(),
): Judgement {
  const status = result.status;
  const resultLabel = attemptLabel(result);
  if (result.kind === 'response' && status !== null && status >= 200 && status < 300) {
    return { ok: true, gone: false, nextAttemptAt: null, error: null, result: resultLabel };
  }
  const gone = status === 410;
  const attemptsMade = delivery.attempts + 1;
  return {
    ok: false,
    gone,
    nextAttemptAt: gone ? null : nextAttemptAt(retryScheduleMs, attemptsMade, now, result.retryAfter),
    error: result.kind === 'response' ? responseError(status) : result.error,
    result: resultLabel,
  };
}

function responseError(status: number | null): string {
  if (status === null) return 'No status.';
  if (status >= 300 && status < 400) return `Redirect not followed (HTTP ${status}).`;
  if (status === 410) return 'HTTP 410 Gone: the endpoint is disabled.';
  return `HTTP ${status}.`;
}

function attemptLabel(result: HttpAttemptResult): AttemptResult {
  if (result.kind !== 'response' || result.status === null)
    return result.kind === 'response' ? 'error' : result.kind;
  if (result.status < 300) return '2xx';
  if (result.status < 400) return '3xx';
  if (result.status < 500) return '4xx';
  return '5xx';
}

function record(
  metrics: WebhooksMetrics,
  delivery: ClaimedDelivery,
  result: HttpAttemptResult,
  outcome: Judgement,
): void {
  metrics.attempts.inc({ result: outcome.result });
  metrics.attemptSeconds.observe(result.ms / 1000);
  const deliveryOutcome = outcome.ok ? 'succeeded' : outcome.nextAttemptAt === null ? 'failed' : 'retry';
  metrics.deliveries.inc({ outcome: deliveryOutcome });
  if (outcome.ok) {
    const occurred = Date.parse(delivery.created_at);
    if (!Number.isNaN(occurred)) metrics.deliveryLatency.observe(Math.max(0, Date.now() - occurred) / 1000);
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
