/** JetStream's "subjects overlap with an existing stream". */
const SUBJECTS_OVERLAP = 10065;
/** Passes before giving up: each is a few round trips, and replicas start a handful at a time. */
const DEFAULT_PASSES = 6;

const apiCode = (error: unknown): number | undefined =>
  (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;

/**
 * Runs `create` (an idempotent opening of streams, KV buckets and consumers) until it passes.
 * Replicas starting together create the same resources at once, and the server may answer the
 * later creator of a stream "subjects overlap" instead of "already exists"; by the next pass the
 * other has made it. One retry is not enough: that pass may meet the other replica creating the
 * next bucket. A short random pause keeps two losers from racing again in step.
 */
export async function retryCreationRace<T>(create: () => Promise<T>, passes = DEFAULT_PASSES): Promise<T> {
  for (let pass = 1; ; pass++) {
    try {
      return await create();
    } catch (error) {
      if (pass >= passes || apiCode(error) !== SUBJECTS_OVERLAP) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * pass));
    }
  }
}
