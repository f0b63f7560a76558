import type { BackendName, JobTaker } from '@switchboard/jobs';
import type { Logger } from '@switchboard/telemetry';
import type { AnimationMetrics } from '../metrics.js';

const INTERVAL_MS = 5000;

/** Samples each served back-end's queue depth and oldest job's age into the gauges. */
export function watchQueues(
  taker: JobTaker,
  backends: readonly BackendName[],
  metrics: AnimationMetrics,
  logger: Logger,
): () => void {
  let warned = false;
  const timer = setInterval(() => {
    void (async () => {
      for (const backend of backends) {
        try {
          const { depth, oldestAgeSeconds } = await taker.queueStats(backend);
          metrics.queueDepth.set({ backend }, depth);
          metrics.queueAge.set({ backend }, oldestAgeSeconds);
          warned = false;
        } catch (error) {
          if (!warned) logger.warn({ err: error, backend }, 'queue statistics unavailable');
          warned = true;
        }
      }
    })();
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
