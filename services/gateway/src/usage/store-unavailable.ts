import { dependencyUnavailable, type SwitchboardError } from '@switchboard/errors';

/** The answer while the usage store cannot be reached: nothing metered is started, nothing read. */
export const usageStoreUnavailable = (cause?: unknown): SwitchboardError =>
  dependencyUnavailable(
    'Usage cannot be recorded or read right now; no work was started. Try again shortly.',
    cause,
  );

/** A read of the usage store, answered 503 unavailable (not 500) when the store is down. */
export async function readUsage<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    throw usageStoreUnavailable(error);
  }
}
