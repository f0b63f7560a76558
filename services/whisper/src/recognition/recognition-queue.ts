// Where windows meet the model. The worker's RecognitionQueue runs windows of any uploads in
// batches (libs/models BatchingQueue): when a pass ends, the oldest waiting window starts the next
// one, joined by the next waiting windows its model can decode with it (same batchKey), so
// concurrent uploads, and the windows one long upload keeps in flight, share passes. A window never
// waits for company. Language detection (one decoder step) runs alone, in the same turns, so the
// model is never asked for more than WHISPER_CONCURRENCY passes at once. Waiting work is taken by
// owner (the caller's API key) in turns, so one key's many windows do not hold back another's.
import { BatchingQueue, type BatchEntry } from '@switchboard/models';
import type { SpeechModel, WindowRequest } from './speech-model.js';

/** A result and when the model pass that produced it ran (performance.now() milliseconds). */
export interface Timed<T> {
  readonly value: T;
  readonly started: number;
  readonly ended: number;
  /** Windows recognised in that pass (1 for a detection or a window alone). */
  readonly batchSize: number;
}

/**
 * Model work for transcription: language detection and windows' tokens, in turns the implementer
 * sets; `owner` is the caller's key id, which those turns may be taken by.
 */
export interface WindowRecognizer {
  detectLanguage(
    model: SpeechModel,
    samples: Float32Array,
    signal: AbortSignal,
    owner?: string,
  ): Promise<Timed<string>>;
  recognize(model: SpeechModel, request: WindowRequest, owner?: string): Promise<Timed<number[]>>;
}

/** Each call straight on the model, alone: for in-process use (benches, tests) without a worker. */
export const directRecognizer: WindowRecognizer = {
  detectLanguage: (model, samples, signal) =>
    timed(() => {
      signal.throwIfAborted();
      return model.detectLanguage(samples);
    }),
  recognize: (model, request) => timed(async () => answer((await model.recognizeWindows([request]))[0]!)),
};

export interface RecognitionQueueOptions {
  /** Passes (batches) running at once. */
  readonly concurrency: number;
  /** Windows and detections allowed to wait; beyond, no_capacity. */
  readonly depth: number;
  /** Most windows in one pass. */
  readonly maxBatch: number;
  /**
   * Whenever either changes (gauges): transcriptions with a window or detection waiting for a pass
   * (each counted once however many of its windows wait, so one long upload's read-ahead is not a
   * queue), and windows being recognised.
   */
  readonly onDepth?: (waitingTranscriptions: number, runningWindows: number) => void;
  /** The size of each recognition pass as it starts (a histogram). */
  readonly onBatch?: (windows: number) => void;
  /** Each recognition pass that ran, with its model and how long it took. */
  readonly onPass?: (model: SpeechModel, windows: number, seconds: number) => void;
}

type Job =
  | { readonly kind: 'detect'; readonly model: SpeechModel; readonly samples: Float32Array }
  | { readonly kind: 'recognize'; readonly model: SpeechModel; readonly request: WindowRequest };

export class RecognitionQueue implements WindowRecognizer {
  private readonly queue: BatchingQueue<Job, Timed<string | number[]>>;
  /** Gives each detection a key of its own, so it runs alone. */
  private detections = 0;
  /** Requests waiting for a pass, per transcription (its signal). */
  private readonly waiting = new Map<AbortSignal, number>();
  /** Requests a runner has taken, so `submit` knows whether one left the queue by running. */
  private readonly started = new WeakSet<Job>();
  private runningWindows = 0;

  constructor(private readonly options: RecognitionQueueOptions) {
    this.queue = new BatchingQueue<Job, Timed<string | number[]>>(
      {
        concurrency: options.concurrency,
        depth: options.depth,
        maxBatch: options.maxBatch,
        batchKey: (job) =>
          job.kind === 'detect'
            ? `detect#${this.detections++}`
            : `recognize:${job.model.batchKey(job.request.language)}`,
      },
      (batch) => this.runBatch(batch),
    );
  }

  async detectLanguage(
    model: SpeechModel,
    samples: Float32Array,
    signal: AbortSignal,
    owner = '',
  ): Promise<Timed<string>> {
    return (await this.submit({ kind: 'detect', model, samples }, signal, owner)) as Timed<string>;
  }

  async recognize(model: SpeechModel, request: WindowRequest, owner = ''): Promise<Timed<number[]>> {
    return (await this.submit({ kind: 'recognize', model, request }, request.signal, owner)) as Timed<
      number[]
    >;
  }

  private async submit(job: Job, signal: AbortSignal, owner: string): Promise<Timed<string | number[]>> {
    this.wait(signal, +1);
    try {
      return await this.queue.run(job, signal, owner);
    } finally {
      // Refused, or aborted while waiting: it leaves without a runner having taken it.
      if (!this.started.has(job)) this.wait(signal, -1);
    }
  }

  private wait(signal: AbortSignal, change: number): void {
    const count = (this.waiting.get(signal) ?? 0) + change;
    if (count > 0) this.waiting.set(signal, count);
    else this.waiting.delete(signal);
    this.report();
  }

  private report(): void {
    this.options.onDepth?.(this.waiting.size, this.runningWindows);
  }

  private async runBatch(batch: readonly BatchEntry<Job>[]): Promise<(Timed<string | number[]> | Error)[]> {
    for (const { request, signal } of batch) {
      this.started.add(request);
      this.wait(signal, -1);
    }
    this.runningWindows += batch.length;
    this.report();
    try {
      return await this.runJobs(batch);
    } finally {
      this.runningWindows -= batch.length;
      this.report();
    }
  }

  private async runJobs(batch: readonly BatchEntry<Job>[]): Promise<(Timed<string | number[]> | Error)[]> {
    const first = batch[0]!.request;
    if (first.kind === 'detect') {
      // Its key is its own, so it is alone.
      return [await timed(() => first.model.detectLanguage(first.samples))];
    }
    // Equal keys: every job of this batch is a window for the same model and prompt length.
    const requests = batch.map(({ request }) => (request as Extract<Job, { kind: 'recognize' }>).request);
    this.options.onBatch?.(requests.length);
    const started = performance.now();
    const results = await first.model.recognizeWindows(requests);
    const ended = performance.now();
    this.options.onPass?.(first.model, requests.length, (ended - started) / 1000);
    const batchSize = requests.length;
    return results.map((result) =>
      result instanceof Error ? result : { value: result, started, ended, batchSize },
    );
  }
}

async function timed<T>(work: () => Promise<T>): Promise<Timed<T>> {
  const started = performance.now();
  const value = await work();
  return { value, started, ended: performance.now(), batchSize: 1 };
}

function answer<T>(result: T | Error): T {
  if (result instanceof Error) throw result;
  return result;
}
