// A worker's start-up opens things one after another (listeners, broker connections, timers). When
// a later step fails, whatever is open already must be closed again, or a failed start leaks ports
// and keeps the process alive; and its close() may be called more than once (a signal and a test's
// clean-up), which must not close anything twice.

/** Records how to undo one step of a start-up that has succeeded. */
export type OnRollback = (undo: () => unknown) => void;

/**
 * Runs `open`, which calls `onRollback(undo)` after each step it has opened. If `open` throws, the
 * undo steps run newest first and the error is rethrown; an undo's own failure is dropped, since
 * the start-up error is the one to report.
 */
export async function startWithRollback<T>(open: (onRollback: OnRollback) => Promise<T>): Promise<T> {
  const undoSteps: (() => unknown)[] = [];
  try {
    return await open((undo) => undoSteps.push(undo));
  } catch (error) {
    for (const undo of undoSteps.reverse()) {
      try {
        await undo();
      } catch {
        // Start-up has failed already; that error is the one to report.
      }
    }
    throw error;
  }
}

/** `close` made idempotent: the first call runs it, every later call waits for the same run. */
export function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
