// The delivery log is kept 30 days (API §11): every sender prunes once an hour. Replicas doing it
// at the same time delete the same rows; the second finds nothing left, which costs one query.
import type { Logger } from '@switchboard/telemetry';
import type { WebhookStore } from '@switchboard/webhooks';

export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export interface Pruner {
  stop(): void;
}

/** Prunes now (after start-up's other work) and every hour; a failure waits for the next hour. */
export function startPruning(
  store: Pick<WebhookStore, 'prune'>,
  logger: Logger,
  intervalMs = PRUNE_INTERVAL_MS,
): Pruner {
  const prune = () => {
    store.prune(new Date(Date.now() - RETENTION_MS)).catch((error: unknown) => {
      logger.warn({ err: error }, 'pruning the delivery log failed; trying again in an hour');
    });
  };
  const first = setTimeout(prune, 1_000);
  const timer = setInterval(prune, intervalMs);
  first.unref();
  timer.unref();
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
