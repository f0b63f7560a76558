// A bounded queue that runs waiting requests together: when a slot frees, the next waiting
// request starts a batch, joined by other waiting ones that can share its model pass (same
// `batchKey`), up to `maxBatch`. One slot runs one batch; beyond `concurrency` running batches and
// `depth` waiting requests a request is refused at once with no_capacity, as WorkQueue does.
// Batches form only from what is already waiting, so a lone request never waits for company.
// Waiting requests are served by owner (the caller's API key) in turns, not in arrival order, and
// a full queue makes room for an owner with few waiting by refusing the newest of the owner with
// the most (fair-line.ts).
import { SwitchboardError } from '@switchboard/errors';
import { FairLine } from './fair-line.js';

export interface BatchingQueueOptions<T> {
  /** Batches running at once. */
  readonly concurrency: number;
  /** Requests allowed to wait for a slot. */
  readonly depth: number;
  /** Most requests in one batch (1 = one at a time, as WorkQueue). */
  readonly maxBatch: number;
  /** Requests with equal keys can run in one pass (same model, size, step count, …). */
  batchKey(request: T): string;
  /** Called whenever the number of waiting requests or running batches changes (gauges). */
  readonly onDepth?: (waiting: number, running: number) => void;
}

/** One request of a batch, with its caller's signal: a row whose caller left can be dropped. */
export interface BatchEntry<T> {
  readonly request: T;
  readonly signal: AbortSignal;
}

/** Runs a batch; resolves with one result per entry, in order (an entry's Error rejects only it). */
export type BatchRunner<T, R> = (batch: readonly BatchEntry<T>[]) => Promise<readonly (R | Error)[]>;

interface Waiting<T, R> extends BatchEntry<T> {
  readonly key: string;
  readonly owner: string;
  resolve(result: R): void;
  reject(error: unknown): void;
  detach(): void;
}

export class BatchingQueue<T, R> {
  private running = 0;
  private readonly waiting = new FairLine<Waiting<T, R>>();
  /** Moving average of batch durations, for a Retry-After that means something. */
  private avgBatchMs = 1000;

  constructor(
    private readonly options: BatchingQueueOptions<T>,
    private readonly runBatch: BatchRunner<T, R>,
  ) {
    if (options.concurrency < 1 || options.depth < 0 || options.maxBatch < 1) {
      throw new Error('concurrency ≥ 1, depth ≥ 0, maxBatch ≥ 1');
    }
  }

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** Whether `run` would refuse a request now. */
  get isFull(): boolean {
    return this.running >= this.options.concurrency && this.waiting.length >= this.options.depth;
  }

  /** Seconds until a slot is likely free, at least 1 (Retry-After is whole seconds). */
  retryAfterSeconds(): number {
    const { concurrency, maxBatch } = this.options;
    const rounds = (this.waiting.length / maxBatch + 1) / concurrency;
    return Math.min(60, Math.max(1, Math.ceil((rounds * this.avgBatchMs) / 1000)));
  }

  /**
   * Queues `request` for `owner` and resolves with its result once the batch it joined has run. A
   * `signal` that aborts while it waits removes it; while its batch runs, the runner sees the
   * signal and the caller gets the abort reason at once. Throws no_capacity when the queue is full
   * and no other owner has more than its share waiting.
   */
  async run(request: T, signal: AbortSignal = new AbortController().signal, owner = ''): Promise<R> {
    signal.throwIfAborted();
    if (this.isFull) {
      const evicted = this.waiting.evictFor(owner);
      if (!evicted) throw this.noCapacity();
      evicted.detach();
      evicted.reject(this.noCapacity());
    }
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => {
        this.waiting.remove(owner, entry);
        this.report();
        reject(signal.reason as Error);
      };
      const entry: Waiting<T, R> = {
        request,
        signal,
        key: this.options.batchKey(request),
        owner,
        resolve,
        reject,
        detach: () => signal.removeEventListener('abort', onAbort),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(owner, entry);
      this.report();
      this.startBatches();
    });
  }

  private noCapacity(): SwitchboardError {
    return new SwitchboardError('no_capacity', { retryAfterSeconds: this.retryAfterSeconds() });
  }

  private startBatches(): void {
    while (this.running < this.options.concurrency && this.waiting.length > 0) {
      const batch = this.takeBatch();
      this.running += 1;
      this.report();
      void this.execute(batch);
    }
  }

  /** The next owner's oldest request, joined by others with its key, taken in turns. */
  private takeBatch(): Waiting<T, R>[] {
    const first = this.waiting.shift()!;
    return [first, ...this.waiting.take(this.options.maxBatch - 1, (entry) => entry.key === first.key)];
  }

  private async execute(batch: Waiting<T, R>[]): Promise<void> {
    const started = performance.now();
    // Running entries answer their own abort at once; the runner drops the row when it can.
    const rejectOnAbort = batch.map((entry) => {
      entry.detach();
      const onAbort = () => entry.reject(entry.signal.reason as Error);
      entry.signal.addEventListener('abort', onAbort, { once: true });
      return () => entry.signal.removeEventListener('abort', onAbort);
    });
    try {
      const results = await this.runBatch(batch.map(({ request, signal }) => ({ request, signal })));
      if (results.length !== batch.length) throw new Error('a batch runner must answer every entry');
      batch.forEach((entry, i) => {
        const result = results[i]!;
        if (result instanceof Error) entry.reject(result);
        else entry.resolve(result);
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      for (const detach of rejectOnAbort) detach();
      this.avgBatchMs = 0.8 * this.avgBatchMs + 0.2 * (performance.now() - started);
      this.running -= 1;
      this.report();
      this.startBatches();
    }
  }

  private report(): void {
    this.options.onDepth?.(this.waiting.length, this.running);
  }
}
