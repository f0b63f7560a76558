// Completion as the RPCs see it: pick the model, check the request, wait for a slot in the
// queue, generate with metrics. Streamed and unary calls share one path.
import type {
  CompleteChunk,
  CompleteRequest__Output,
  CompleteResponse,
  ListModelsResponse,
} from '@switchboard/contracts';
import type { ModelRegistry, WorkQueue } from '@switchboard/models';
import { generate, type GenerationEvent, type GenerationRequest } from '../generation/generate.js';
import type { LanguageModel } from '../generation/model.js';
import type { LlmMetrics } from '../metrics.js';
import { toGenerationRequest } from './request.js';

export class CompletionService {
  constructor(
    private readonly registry: ModelRegistry<LanguageModel>,
    private readonly queue: WorkQueue,
    private readonly metrics: LlmMetrics,
  ) {}

  /** Deltas as chunks, then one `done` chunk with finish_reason and usage. */
  async *stream(request: CompleteRequest__Output, signal: AbortSignal): AsyncGenerator<CompleteChunk> {
    // Everything that can refuse the request does so before it takes a place in the queue.
    const { id, handle: model } = this.registry.get(request.model);
    const generation = toGenerationRequest(request, model);
    const promptTokens = generation.promptIds.length;
    const events = this.queue.runStream(() => this.observed(model, generation, signal), signal);
    for await (const event of events) {
      if (event.type === 'delta') {
        yield { delta: event.text, model: id };
      } else {
        const usage = {
          prompt_tokens: promptTokens,
          completion_tokens: event.completionTokens,
          total_tokens: promptTokens + event.completionTokens,
        };
        yield { done: { model: id, text: '', finish_reason: event.finishReason, usage }, model: id };
      }
    }
  }

  async complete(request: CompleteRequest__Output, signal: AbortSignal): Promise<CompleteResponse> {
    let text = '';
    for await (const chunk of this.stream(request, signal)) {
      if (chunk.delta !== undefined) text += chunk.delta;
      else if (chunk.done) return { ...chunk.done, text };
    }
    throw new Error('generation ended without a result');
  }

  listModels(): ListModelsResponse {
    return this.registry.listModelsResponse();
  }

  /** Wraps a generation with its metrics; counts it as cancelled when it ends unfinished. */
  private async *observed(
    model: LanguageModel,
    generation: GenerationRequest,
    signal: AbortSignal,
  ): AsyncGenerator<GenerationEvent> {
    const { metrics } = this;
    const labels = { model: model.id };
    const started = performance.now();
    let last: number | undefined;
    let finished = false;
    const onToken = () => {
      const now = performance.now();
      if (last === undefined) metrics.timeToFirstToken.observe(labels, (now - started) / 1000);
      else metrics.interTokenLatency.observe(labels, (now - last) / 1000);
      last = now;
      metrics.tokensGenerated.inc(labels);
    };
    try {
      for await (const event of generate(model, generation, signal, { onToken })) {
        if (event.type === 'done') {
          finished = true;
          metrics.requests.inc({ ...labels, finish_reason: event.finishReason });
        }
        yield event;
      }
    } finally {
      if (!finished && signal.aborted) metrics.cancelled.inc(labels);
    }
  }
}
