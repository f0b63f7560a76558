// How a worker process ends: its entry point hands the started worker here, and SIGTERM (Kubernetes
// stopping the pod) or SIGINT (Ctrl-C in the local runner) closes it once and exits.
import type { Logger } from '@switchboard/telemetry';

/** Anything that drains and releases what it opened: a started worker's handle. */
export interface Closable {
  close(): Promise<void>;
}

export interface SignalOptions {
  logger: Logger;
  /** Exits the process when done, 0 or 1 if closing failed (default true). */
  exit?: boolean;
}

/**
 * SIGTERM/SIGINT → `running.close()` once, then exit. A repeated signal while closing is logged
 * and otherwise ignored, so a second Ctrl-C cannot cut a drain short. Returns a function that
 * removes the handlers.
 */
export function shutdownOnSignals(running: Closable, options: SignalOptions): () => void {
  const { logger, exit = true } = options;
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      logger.warn({ signal }, 'already shutting down');
      return;
    }
    started = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => {
        if (exit) process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        if (exit) process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
