// A bounded work queue: at most `concurrency` jobs run, at most `depth` wait; beyond that a
// request is refused at once with no_capacity, so clients back off instead of piling up. Waiting
// jobs are started by owner (the caller's API key) in turns, and a full queue makes room for an
// owner with few waiting by refusing the newest of the owner with the most (fair-line.ts).
import { SwitchboardError } from '@switchboard/errors';
import { FairLine } from './fair-line.js';

export interface WorkQueueOptions {
  readonly concurrency: number;
  readonly depth: number;
  /** Called whenever the number of waiting jobs changes (a queue-depth gauge). */
  readonly onDepth?: (waiting: number, running: number) => void;
}

interface Waiter {
  start: () => void;
  refuse: (error: Error) => void;
}

export class WorkQueue {
  private running = 0;
  private readonly waiting = new FairLine<Waiter>();
  /** Moving average of job durations, for a Retry-After that means something. */
  private avgJobMs = 1000;

  constructor(private readonly options: WorkQueueOptions) {
    if (options.concurrency < 1 || options.depth < 0) throw new Error('concurrency ≥ 1, depth ≥ 0');
  }

  get depth(): number {
    return this.waiting.length;
  }

  get active(): number {
    return this.running;
  }

  /** Whether `run` would refuse a job now, so a caller can refuse before doing costly work. */
  get isFull(): boolean {
    return this.running >= this.options.concurrency && this.waiting.length >= this.options.depth;
  }

  /** Seconds until a slot is likely free, at least 1 (Retry-After is whole seconds). */
  retryAfterSeconds(): number {
    const rounds = (this.waiting.length + 1) / this.options.concurrency;
    return Math.min(60, Math.max(1, Math.ceil((rounds * this.avgJobMs) / 1000)));
  }

  /**
   * Waits for a slot (unless `signal` aborts first, which removes the job from the queue), runs
   * `job` for `owner`, frees the slot. Throws no_capacity when the queue is full and no other
   * owner has more than its share waiting.
   */
  async run<T>(job: () => Promise<T>, signal?: AbortSignal, owner = ''): Promise<T> {
    signal?.throwIfAborted();
    if (this.running >= this.options.concurrency) {
      if (this.waiting.length >= this.options.depth) {
        const evicted = this.waiting.evictFor(owner);
        if (!evicted) throw this.noCapacity();
        evicted.refuse(this.noCapacity());
      }
      // A finishing job hands its slot straight to the next waiter (see finally), so a newcomer
      // cannot take it ahead of those waiting.
      await this.wait(signal, owner);
    } else {
      this.running += 1;
      this.report();
    }
    const started = performance.now();
    try {
      return await job();
    } finally {
      this.avgJobMs = 0.8 * this.avgJobMs + 0.2 * (performance.now() - started);
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running -= 1;
      this.report();
    }
  }

  /** Consumes one job's worth of the queue like `run`, for a job whose body is an async iterator. */
  async *runStream<T>(job: () => AsyncIterable<T>, signal?: AbortSignal, owner = ''): AsyncIterable<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const admitted = new Promise<void>((resolve) => (started = resolve));
    const slot = this.run(
      () => {
        started();
        return held;
      },
      signal,
      owner,
    );
    // Whichever settles first: admission, or refusal/cancellation while waiting.
    await Promise.race([admitted, slot]);
    try {
      yield* job();
    } finally {
      release();
      await slot;
    }
  }

  private noCapacity(): SwitchboardError {
    return new SwitchboardError('no_capacity', { retryAfterSeconds: this.retryAfterSeconds() });
  }

  private wait(signal: AbortSignal | undefined, owner: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        refuse: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        this.waiting.remove(owner, waiter);
        this.report();
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(owner, waiter);
      this.report();
    });
  }

  private report(): void {
    this.options.onDepth?.(this.waiting.length, this.running);
  }
}
