// Continuous batching: one decoding loop per model runs every active generation as one batch,
// one model pass per step. Between steps, finished and cancelled rows leave and waiting requests
// join: new prompts are read together in one pass and join as rows; a prompt longer than the
// prefill budget is read in chunks, one per step, so it delays the running streams by one chunk's
// pass at a time, never by its whole length. Each generation samples from its own row's logits with its own seeded stream, so
// its tokens do not depend on what else is in the batch.
import { SwitchboardError } from '@switchboard/errors';
import { FairLine } from '@switchboard/models';
import { Generation, type GenerationEvent, type GenerationRequest } from './generation.js';
import { EventBuffer } from './event-buffer.js';
import { GenerationPhases } from './generation-phases.js';
import type { DecodeBatch, LanguageModel, PrefillSequence } from './model.js';

export interface DecodeLoopLimits {
  /** Generations decoding together (LLM_MAX_BATCH); 1 runs them one at a time. */
  readonly maxBatch: number;
  /**
   * Cache positions the batch may reserve (LLM_KV_CACHE_TOKENS): rows × the longest row's prompt +
   * max_tokens, the most the padded cache can grow to. A request alone always runs.
   */
  readonly cacheTokens: number;
  /**
   * Prompt tokens read per pass while the batch decodes (LLM_PREFILL_CHUNK_TOKENS): new short
   * prompts are read together, padded to the longest, up to this; a longer prompt is read alone in
   * chunks of this, one per step.
   */
  readonly prefillChunkTokens: number;
  /** Requests allowed to wait for a place in the batch (LLM_QUEUE_DEPTH). */
  readonly queueDepth: number;
  /** Events a stream may leave unread before its generation is stopped (LLM_STREAM_BUFFER_EVENTS). */
  readonly streamBufferEvents: number;
}

export interface LoopHooks {
  /** After each batched step, with the number of rows it ran. */
  onStep?(rows: number): void;
  /** Whenever the numbers waiting or running change (gauges). */
  onChange?(): void;
  /** A request took a place in the batch after waiting `seconds`. */
  onAdmitted?(seconds: number): void;
  /** A request's prompt of `promptTokens` was read, in `seconds` from its admission. */
  onPrefilled?(seconds: number, promptTokens: number): void;
}

/** One request in the loop, from waiting to its last event. */
interface Sequence {
  readonly generation: Generation;
  readonly events: EventBuffer;
  /** Prompt + max_tokens: the most cache positions it can come to hold. */
  readonly reserved: number;
  readonly onToken: (() => void) | undefined;
  /** The caller's API key: waiting requests are admitted by owner in turns. */
  readonly owner: string;
  /** Its spans (queue, prefill, decode) in the trace of the call that submitted it. */
  readonly phases: GenerationPhases;
  prefill?: PrefillSequence;
  /** The token its next step feeds. */
  nextToken: number;
  /** Finished, failed, cancelled or abandoned: it leaves at the next chance. */
  stopped: boolean;
  admittedAt: number;
}

export class DecodeLoop {
  private readonly waiting = new FairLine<Sequence>();
  /** Admitted, prompt being read (oldest first). */
  private readonly reading: Sequence[] = [];
  /** The batch's rows, in row order. */
  private readonly decoding: Sequence[] = [];
  private batch: DecodeBatch;
  private running: Promise<void> | undefined;
  /** Moving average of generation durations, for a Retry-After that means something. */
  private avgGenerationMs = 1000;

  constructor(
    private readonly model: LanguageModel,
    private readonly limits: DecodeLoopLimits,
    private readonly hooks: LoopHooks = {},
  ) {
    if (limits.maxBatch < 1 || limits.prefillChunkTokens < 1 || limits.queueDepth < 0) {
      throw new Error('maxBatch ≥ 1, prefillChunkTokens ≥ 1, queueDepth ≥ 0');
    }
    this.batch = model.openBatch();
  }

  /** Requests waiting for a place. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Requests in the batch or having their prompt read. */
  get activeCount(): number {
    return this.reading.length + this.decoding.length;
  }

  /**
   * KV cache positions held now: the batch's padded rows plus the prompts being read in chunks.
   * Bounded by limits.cacheTokens, except for a request too long for it, which runs alone.
   */
  get cachedTokens(): number {
    let reading = 0;
    for (const sequence of this.reading) reading += sequence.prefill?.length ?? 0;
    return this.batch.cachedTokens + reading;
  }

  /**
   * Queues a generation for `owner` and yields its events: text deltas, then one `done`. Throws
   * no_capacity when it can neither join now nor wait, and no other owner has more than its share
   * waiting (then that owner's newest waiting request is refused instead). `signal` aborting, or
   * the caller ceasing to read, takes it out of the batch before the next step.
   */
  generate(
    request: GenerationRequest,
    signal: AbortSignal,
    onToken?: () => void,
    owner = '',
  ): AsyncIterable<GenerationEvent> {
    signal.throwIfAborted();
    const sequence: Sequence = {
      generation: new Generation(this.model, request),
      events: new EventBuffer(),
      reserved: request.promptIds.length + request.maxTokens,
      onToken,
      owner,
      // Created here, in the submitting call's async context, whose trace its spans join.
      phases: new GenerationPhases({
        'llm.model': this.model.id,
        'llm.prompt_tokens': request.promptIds.length,
        'llm.max_tokens': request.maxTokens,
      }),
      nextToken: -1,
      stopped: false,
      admittedAt: 0,
    };
    const joinsNow = this.waiting.length === 0 && this.fits(sequence);
    if (!joinsNow && this.waiting.length >= this.limits.queueDepth) {
      const evicted = this.waiting.evictFor(owner);
      if (!evicted) {
        const refusal = this.noCapacity();
        sequence.phases.failed(refusal, 0);
        throw refusal;
      }
      this.fail(evicted, this.noCapacity());
    }
    const onAbort = () => {
      sequence.stopped = true;
      sequence.events.fail(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    this.waiting.push(owner, sequence);
    this.hooks.onChange?.();
    this.running ??= this.run();
    return this.read(sequence, () => signal.removeEventListener('abort', onAbort));
  }

  /** Seconds until a place is likely free, at least 1 (Retry-After is whole seconds). */
  retryAfterSeconds(): number {
    const rounds = this.waiting.length / this.limits.maxBatch + 1;
    return Math.min(60, Math.max(1, Math.ceil((rounds * this.avgGenerationMs) / 1000)));
  }

  private noCapacity(): SwitchboardError {
    return new SwitchboardError('no_capacity', { retryAfterSeconds: this.retryAfterSeconds() });
  }

  private async *read(sequence: Sequence, detach: () => void): AsyncGenerator<GenerationEvent> {
    try {
      yield* sequence.events;
    } finally {
      detach();
      sequence.stopped = true;
      // A no-op when it finished or failed; otherwise its reader left before the end.
      sequence.phases.abandoned(sequence.generation.completionTokens);
    }
  }

  /** Whether a sequence can join the batch now, by rows and by the cache it may come to hold. */
  private fits(sequence: Sequence): boolean {
    const admitted = [...this.reading, ...this.decoding];
    if (admitted.length === 0) return true;
    if (admitted.length >= this.limits.maxBatch) return false;
    const longest = Math.max(sequence.reserved, ...admitted.map((s) => s.reserved));
    return (admitted.length + 1) * longest <= this.limits.cacheTokens;
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        this.leaveStopped();
        // Owners take turns; the one whose turn it is joins first, and nobody jumps it.
        for (let next = this.waiting.peek(); next && this.fits(next); next = this.waiting.peek()) {
          const sequence = this.waiting.shift()!;
          sequence.admittedAt = performance.now();
          this.hooks.onAdmitted?.(sequence.phases.admitted());
          this.reading.push(sequence);
          this.hooks.onChange?.();
        }
        if (this.activeCount === 0) break;
        if (this.reading.length > 0) await this.readPrompts();
        if (this.decoding.length > 0) await this.step();
      }
    } catch (error) {
      // A fault of the loop itself rather than of one pass (those fail their rows and go on):
      // the requests it was running get the error, and a fresh batch serves those waiting.
      for (const sequence of [...this.reading.splice(0), ...this.decoding.splice(0)])
        this.fail(sequence, error);
      await this.batch.dispose();
      this.batch = this.model.openBatch();
      this.hooks.onChange?.();
    } finally {
      this.running = undefined;
    }
    if (this.waiting.length > 0) this.running = this.run();
  }

  /**
   * One pass for the admitted short prompts, read together (as many as the budget holds when
   * padded to the longest), which then join the batch; and one chunk of the oldest long prompt.
   */
  private async readPrompts(): Promise<void> {
    const budget = this.limits.prefillChunkTokens;
    const length = (s: Sequence) => s.generation.request.promptIds.length;
    const short: Sequence[] = [];
    for (const sequence of this.reading) {
      if (sequence.prefill || length(sequence) > budget) continue;
      const longest = Math.max(length(sequence), ...short.map(length));
      if ((short.length + 1) * longest > budget) break;
      short.push(sequence);
    }
    if (short.length > 0) await this.joinPrompts(short);
    const long = this.reading.find((s) => !short.includes(s) && (s.prefill || length(s) > budget));
    if (long) await this.readChunk(long);
  }

  private async joinPrompts(group: Sequence[]): Promise<void> {
    this.leave(this.reading, group);
    let logits: Float32Array[];
    try {
      logits = await this.batch.join(group.map((s) => s.generation.request.promptIds));
    } catch (error) {
      for (const sequence of group) this.fail(sequence, error);
      this.hooks.onChange?.();
      return;
    }
    for (const sequence of group) this.prefilled(sequence);
    const firstRow = this.decoding.length;
    this.decoding.push(...group);
    for (let i = group.length - 1; i >= 0; i--) {
      const sequence = group[i]!;
      if (sequence.stopped || !this.take(sequence, logits[i]!)) this.removeRow(firstRow + i);
    }
    this.hooks.onChange?.();
  }

  /** Reads the next chunk of a long prompt, alone; once read, it joins the batch. */
  private async readChunk(sequence: Sequence): Promise<void> {
    const ids = sequence.generation.request.promptIds;
    const prefill = (sequence.prefill ??= this.model.prefill());
    let logits: Float32Array;
    try {
      logits = await prefill.feed(ids.slice(prefill.length, prefill.length + this.limits.prefillChunkTokens));
    } catch (error) {
      this.leave(this.reading, [sequence]);
      this.fail(sequence, error);
      return;
    }
    if (prefill.length < ids.length) return;
    this.leave(this.reading, [sequence]);
    this.prefilled(sequence);
    if (!sequence.stopped && this.take(sequence, logits)) {
      this.batch.add(prefill);
      this.decoding.push(sequence);
    }
    this.hooks.onChange?.();
  }

  private prefilled(sequence: Sequence): void {
    this.hooks.onPrefilled?.(sequence.phases.prefilled(), sequence.generation.request.promptIds.length);
  }

  private leave(list: Sequence[], leaving: readonly Sequence[]): void {
    for (const sequence of leaving) {
      const at = list.indexOf(sequence);
      if (at >= 0) list.splice(at, 1);
    }
  }

  /** One pass for every row; finished and stopped rows leave. */
  private async step(): Promise<void> {
    const rows = this.decoding.length;
    let logits: Float32Array[];
    try {
      logits = await this.batch.step(this.decoding.map((s) => s.nextToken));
    } catch (error) {
      // The batch's cache is no longer trustworthy: every row fails, and a fresh batch starts.
      for (const sequence of this.decoding.splice(0)) this.fail(sequence, error);
      await this.batch.dispose();
      this.batch = this.model.openBatch();
      this.hooks.onChange?.();
      return;
    }
    this.hooks.onStep?.(rows);
    for (let row = rows - 1; row >= 0; row--) {
      const sequence = this.decoding[row]!;
      if (sequence.stopped || !this.take(sequence, logits[row]!)) this.removeRow(row);
    }
  }

  /** Hands a token to its generation; false once the generation is over (or its reader is gone). */
  private take(sequence: Sequence, logits: Float32Array): boolean {
    const outcome = sequence.generation.next(logits);
    sequence.onToken?.();
    for (const event of outcome.events) {
      sequence.events.push(event);
      if (event.type === 'done') sequence.phases.finished(event.finishReason, event.completionTokens);
    }
    if (outcome.done) {
      sequence.stopped = true;
      sequence.events.end();
      this.avgGenerationMs = 0.8 * this.avgGenerationMs + 0.2 * (performance.now() - sequence.admittedAt);
      return false;
    }
    if (sequence.events.unread > this.limits.streamBufferEvents) {
      this.fail(
        sequence,
        new SwitchboardError('no_capacity', {
          message: `The stream was read too slowly: ${sequence.events.unread} events waited unread, so its generation was stopped to keep the other streams flowing.`,
        }),
      );
      return false;
    }
    sequence.nextToken = outcome.token;
    return true;
  }

  private fail(sequence: Sequence, error: unknown): void {
    sequence.stopped = true;
    sequence.phases.failed(error, sequence.generation.completionTokens);
    sequence.events.fail(error);
  }

  private removeRow(row: number): void {
    this.decoding.splice(row, 1);
    this.batch.remove(row);
    this.hooks.onChange?.();
  }

  /** Cancelled and abandoned requests leave wherever they are. */
  private leaveStopped(): void {
    for (let row = this.decoding.length - 1; row >= 0; row--) {
      if (this.decoding[row]!.stopped) this.removeRow(row);
    }
    for (let i = this.reading.length - 1; i >= 0; i--) {
      if (this.reading[i]!.stopped) {
        this.reading.splice(i, 1);
        this.hooks.onChange?.();
      }
    }
    if (this.waiting.removeWhere((sequence) => sequence.stopped) > 0) this.hooks.onChange?.();
  }
}
