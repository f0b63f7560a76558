// A generation's own state between model steps: sampling, stop conditions and UTF-8-safe
// streaming. Both RPCs use it through the decoding loop, so the unary text is exactly the
// concatenated deltas.
import type { LanguageModel } from './model.js';
import { SeededRandom } from '@switchboard/models';
import { sampleToken } from './sampler.js';
import { StopMatcher } from './stop-strings.js';
import { IncrementalDecoder, PROMPT_CONTEXT_TOKENS } from './text-decoder.js';

export interface GenerationRequest {
  readonly promptIds: readonly number[];
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  readonly seed: bigint;
  readonly stop: readonly string[];
}

export type FinishReason = 'stop' | 'length';

export type GenerationEvent =
  | { readonly type: 'delta'; readonly text: string }
  | { readonly type: 'done'; readonly finishReason: FinishReason; readonly completionTokens: number };

/** What one token did to a generation. */
export interface TokenOutcome {
  /** The token chosen; the next step feeds it unless the generation is over. */
  readonly token: number;
  /** Text that became stable with it, and `done` once the generation is over. */
  readonly events: readonly GenerationEvent[];
  readonly done: boolean;
}

/**
 * One request's generation, token by token, whatever it runs in: sampling with its own seeded
 * stream, its stop conditions, and UTF-8-safe text. It holds nothing of the model's cache, so the
 * decoding loop can run it in a batch of any size: its tokens depend only on its own logits.
 */
export class Generation {
  private readonly random: SeededRandom;
  private readonly decoder: IncrementalDecoder;
  private readonly stops: StopMatcher;
  private generated = 0;

  constructor(
    private readonly model: Pick<LanguageModel, 'decode' | 'eosTokenIds'>,
    readonly request: GenerationRequest,
  ) {
    this.random = new SeededRandom(request.seed);
    this.decoder = new IncrementalDecoder(
      (ids) => model.decode(ids),
      request.promptIds.slice(-PROMPT_CONTEXT_TOKENS),
    );
    this.stops = new StopMatcher(request.stop);
  }

  get completionTokens(): number {
    return this.generated;
  }

  next(logits: ArrayLike<number>): TokenOutcome {
    const token = sampleToken(logits, this.request, this.random);
    this.generated += 1;
    if (this.model.eosTokenIds.has(token)) return { token, events: this.finish('stop'), done: true };
    const { text, stopped } = this.stops.push(this.decoder.push(token));
    const events: GenerationEvent[] = text ? [{ type: 'delta', text }] : [];
    if (stopped) {
      events.push({ type: 'done', finishReason: 'stop', completionTokens: this.generated });
      return { token, events, done: true };
    }
    if (this.generated >= this.request.maxTokens) {
      return { token, events: [...events, ...this.finish('length')], done: true };
    }
    return { token, events, done: false };
  }

  /** The end: held-back bytes and text come out now (a stop string may still complete). */
  private finish(reason: FinishReason): GenerationEvent[] {
    const tail = this.stops.push(this.decoder.flush());
    const text = tail.text + (tail.stopped ? '' : this.stops.flush());
    const events: GenerationEvent[] = text ? [{ type: 'delta', text }] : [];
    events.push({
      type: 'done',
      finishReason: tail.stopped ? 'stop' : reason,
      completionTokens: this.generated,
    });
    return events;
  }
}
