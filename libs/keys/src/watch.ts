import type { KV, KvEntry } from 'nats';
import type { Logger } from '@switchboard/telemetry';

export interface BucketWatch {
  /** Resolves once every value present when the watch started has been handed to onEntry. */
  readonly ready: Promise<void>;
  /** False once the watch has ended (stopped, or the connection closed for good). */
  readonly active: boolean;
  stop(): void;
}

/**
 * Feeds every entry of a bucket (current values first, then each change) to `onEntry`. The
 * ordered consumer behind kv.watch() re-creates itself after reconnects, so a replica keeps
 * converging without help; if the iterator ends anyway (connection closed) we log it.
 */
export async function watchBucket(
  kv: KV,
  onEntry: (entry: KvEntry) => void,
  logger: Logger | undefined,
  bucket: string,
): Promise<BucketWatch> {
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const iterator = await kv.watch({ initializedFn: () => markReady() });
  let stopped = false;
  let active = true;
  void (async () => {
    try {
      for await (const entry of iterator) {
        try {
          onEntry(entry);
        } catch (error) {
          logger?.warn({ err: error, bucket, key: entry.key }, 'kv entry ignored');
        }
      }
    } catch (error) {
      if (!stopped) logger?.warn({ err: error, bucket }, 'kv watch failed');
    }
    active = false;
    if (!stopped) logger?.warn({ bucket }, 'kv watch ended');
    markReady(); // never leave a waiter hanging on a watch that is gone
  })();
  return {
    ready,
    get active() {
      return active;
    },
    stop() {
      stopped = true;
      iterator.stop();
    },
  };
}
