// The decode loop: one model step per token, with the KV cache, sampling, stop conditions and
// UTF-8-safe streaming. Both RPCs use it, so the unary text is exactly the concatenated deltas.
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

export interface StepObserver {
  /** After each generated token (metrics: time to first token, inter-token latency). */
  onToken?(): void;
}

/**
 * Yields text deltas as soon as they are stable, then one `done`. Checks `signal` before every
 * model step, so a cancelled call stops within one step (it then throws the abort reason).
 * Consuming it lazily is backpressure: no step runs while a yielded delta waits to be taken.
 */
export async function* generate(
  model: LanguageModel,
  request: GenerationRequest,
  signal: AbortSignal,
  observer: StepObserver = {},
): AsyncGenerator<GenerationEvent> {
  const random = new SeededRandom(request.seed);
  const decoder = new IncrementalDecoder(
    (ids) => model.decode(ids),
    request.promptIds.slice(-PROMPT_CONTEXT_TOKENS),
  );
  const stops = new StopMatcher(request.stop);
  const sequence = model.start(request.promptIds);
  let generated = 0;
  try {
    let finishReason: FinishReason | undefined;
    while (finishReason === undefined) {
      signal.throwIfAborted();
      const logits = await sequence.logits();
      signal.throwIfAborted();
      const id = sampleToken(logits, request, random);
      generated += 1;
      observer.onToken?.();
      if (model.eosTokenIds.has(id)) {
        finishReason = 'stop';
        break;
      }
      const { text, stopped } = stops.push(decoder.push(id));
      if (text) yield { type: 'delta', text };
      if (stopped) {
        yield { type: 'done', finishReason: 'stop', completionTokens: generated };
        return;
      }
      if (generated >= request.maxTokens) finishReason = 'length';
      else sequence.append(id);
    }
    // The end: held-back bytes and text come out now (a stop string may still complete).
    const tail = stops.push(decoder.flush());
    const text = tail.text + (tail.stopped ? '' : stops.flush());
    if (text) yield { type: 'delta', text };
    yield { type: 'done', finishReason: tail.stopped ? 'stop' : finishReason, completionTokens: generated };
  } finally {
    await sequence.dispose();
  }
}
