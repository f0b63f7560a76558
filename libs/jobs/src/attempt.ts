// One attempt at one job, as a worker holds it: heartbeats keep the message (in-progress acks),
// a watch on the record turns a cancel into an abort, progress goes to the record, and the end
// is a compare-and-set transition — so a job finishes exactly once whatever else races it.
import type { JsMsg, KV, KvWatchOptions } from 'nats';
import { traceContextOf, type EventPublisher, type TraceParent } from '@switchboard/events';
import { publishJobEvent } from './events.js';
import type { JobRecords } from './records.js';
import type { ActiveJobSlots } from './slots.js';
import { decodeRecord, type JobError, type JobRecord, type JobResult } from './record.js';

export interface AttemptDeps {
  readonly records: JobRecords;
  readonly slots: ActiveJobSlots;
  readonly events: EventPublisher | undefined;
  readonly ackWaitMs: number;
  readonly maxAttempts: number;
  /** Delay before a failed attempt's job is offered again. */
  readonly retryDelayMs: (attempt: number) => number;
}

/** Why an attempt's signal was aborted. */
export class JobCanceledError extends Error {
  constructor() {
    super('the job was canceled');
    this.name = 'JobCanceledError';
  }
}

const PROGRESS_INTERVAL_MS = 100;

export type Ending = 'succeeded' | 'failed' | 'retrying' | 'canceled' | 'finished-elsewhere' | 'released';

export class JobAttempt {
  private readonly controller = new AbortController();
  private readonly heartbeat: NodeJS.Timeout;
  private stopWatch: (() => void) | undefined;
  private progressWrite: Promise<void> = Promise.resolve();
  private pendingProgress: number | undefined;
  private lastProgressAt = 0;
  private ended = false;

  constructor(
    /** The record as this attempt started it (status running, attempts counted). */
    readonly record: JobRecord,
    private readonly msg: JsMsg,
    private readonly deps: AttemptDeps,
  ) {
    // Three heartbeats per ack wait: one lost to a busy event loop does not lose the job.
    this.heartbeat = setInterval(() => this.msg.working(), Math.max(100, deps.ackWaitMs / 3));
    this.heartbeat.unref();
  }

  /** The trace the job was submitted in (from its message's headers): attempts are its children. */
  get traceParent(): TraceParent {
    return traceContextOf(this.msg);
  }

  /** Aborted when the job is canceled (reason: JobCanceledError) or the worker stops. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get canceled(): boolean {
    return this.controller.signal.reason instanceof JobCanceledError;
  }

  /** Starts watching the record for a cancel. */
  async watchForCancel(kv: KV): Promise<void> {
    const options: KvWatchOptions = {
      key: `${this.record.owner_key_id}.${this.record.job_id}`,
      include: 'updates' as KvWatchOptions['include'],
    };
    const watch = await kv.watch(options);
    this.stopWatch = () => watch.stop();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation !== 'PUT' || entry.value.length === 0) continue;
        try {
          if (decodeRecord(entry.value).status === 'canceled') {
            this.controller.abort(new JobCanceledError());
            return;
          }
        } catch {
          // An unreadable record is not a cancel; the final transition will report it.
        }
      }
    })();
  }

  /** Aborts the attempt because the worker is stopping (the job goes back to the queue). */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /**
   * Records progress. Writes are coalesced and at least PROGRESS_INTERVAL_MS apart: a model step
   * slower than that (every real one) is written each time, and a fast loop of tiny steps does not
   * spend the cores on KV writes. The latest value is always written in the end.
   */
  progress(fraction: number): void {
    const value = Math.min(1, Math.max(0, fraction));
    const idle = this.pendingProgress === undefined;
    this.pendingProgress = value;
    if (!idle) return;
    this.progressWrite = this.progressWrite.then(async () => {
      const wait = this.lastProgressAt + PROGRESS_INTERVAL_MS - Date.now();
      if (wait > 0 && !this.ended) await new Promise((resolve) => setTimeout(resolve, wait));
      const next = this.pendingProgress;
      this.pendingProgress = undefined;
      if (next === undefined || this.ended) return;
      this.lastProgressAt = Date.now();
      await this.deps.records
        .update(this.record.owner_key_id, this.record.job_id, (current) =>
          current.status === 'running' && next > current.progress
            ? { ...current, progress: next, updated_at: new Date().toISOString() }
            : undefined,
        )
        .catch(() => undefined); // progress is advisory; the final transition is what counts
    });
  }

  private async finish(
    change: (current: JobRecord) => JobRecord | undefined,
  ): Promise<{ record: JobRecord | null; changed: boolean }> {
    this.ended = true;
    clearInterval(this.heartbeat);
    this.stopWatch?.();
    // A progress write still in flight cannot undo the end: it only ever changes a running
    // record, and the compare-and-set below re-reads if it lands in between.
    return this.deps.records.update(this.record.owner_key_id, this.record.job_id, change);
  }

  private async settle(record: JobRecord): Promise<void> {
    await this.deps.slots.release(record.owner_key_id, record.job_id).catch(() => undefined);
    publishJobEvent(this.deps.events, record);
  }

  /**
   * The result is stored: the job succeeds unless it was canceled (then the caller removes the
   * result) or another attempt already finished it.
   */
  async succeed(result: JobResult): Promise<Ending> {
    let ending = 'succeeded' as Ending;
    const { record, changed } = await this.finish((current) => {
      if (current.status === 'canceled') ending = 'canceled';
      else if (current.status !== 'running' && current.status !== 'queued') ending = 'finished-elsewhere';
      else {
        ending = 'succeeded';
        const now = new Date().toISOString();
        return {
          ...current,
          status: 'succeeded',
          progress: 1,
          result,
          error: null,
          updated_at: now,
          finished_at: now,
        };
      }
      return undefined;
    });
    if (changed && record) await this.settle(record);
    this.msg.ack();
    return record ? ending : 'finished-elsewhere';
  }

  /**
   * The attempt failed. A permanent error fails the job with its code; any other is retried
   * until the attempts run out, then the job fails with attempts_exhausted naming it.
   */
  async fail(error: JobError, permanent: boolean): Promise<Ending> {
    let ending = 'failed' as Ending;
    const { record, changed } = await this.finish((current) => {
      const now = new Date().toISOString();
      if (current.status === 'canceled') ending = 'canceled';
      else if (current.status === 'succeeded' || current.status === 'failed') ending = 'finished-elsewhere';
      else if (permanent || current.attempts >= this.deps.maxAttempts) {
        ending = 'failed';
        const failure = permanent ? error : exhausted(current.attempts, error.message);
        return {
          ...current,
          status: 'failed',
          error: failure,
          last_error: error.message,
          updated_at: now,
          finished_at: now,
        };
      } else {
        ending = 'retrying';
        return { ...current, status: 'queued', progress: 0, last_error: error.message, updated_at: now };
      }
      return undefined;
    });
    if (ending === 'retrying' && changed) {
      this.msg.nak(this.deps.retryDelayMs(this.record.attempts));
      return ending;
    }
    if (changed && record && ending === 'failed') await this.settle(record);
    this.msg.ack();
    return ending;
  }

  /** The job was canceled under us: nothing more to do than let the message go. */
  async dropCanceled(): Promise<Ending> {
    await this.finish(() => undefined);
    this.msg.ack();
    return 'canceled';
  }

  /**
   * The worker is stopping: the job goes back to the queue at once for another worker, and this
   * interrupted attempt is not counted against it.
   */
  release(): Promise<Ending> {
    return this.requeueUncounted(0);
  }

  /**
   * The attempt could not run because something the cluster provides (the object store) is
   * unreachable: not the job's fault, so the attempt is not counted and the job is offered again
   * after `delayMs`, for as long as the outage lasts (a cancel still ends it).
   */
  postpone(reason: string, delayMs: number): Promise<Ending> {
    return this.requeueUncounted(delayMs, reason);
  }

  private async requeueUncounted(delayMs: number, reason?: string): Promise<Ending> {
    const { changed } = await this.finish((current) =>
      current.status === 'running'
        ? {
            ...current,
            status: 'queued',
            progress: 0,
            attempts: Math.max(0, current.attempts - 1),
            ...(reason === undefined ? {} : { last_error: reason }),
            updated_at: new Date().toISOString(),
          }
        : undefined,
    );
    if (changed) this.msg.nak(delayMs);
    else this.msg.ack();
    return 'released';
  }
}

export function exhausted(attempts: number, lastError: string): JobError {
  return {
    code: 'attempts_exhausted',
    message: `The job failed ${attempts} times; the last attempt ended with: ${lastError}`,
  };
}
