// Completion as the RPCs see it: pick the model, check the request, hand it to that model's
// decoding loop (continuous batching), with metrics. Streamed and unary calls share one path.
import type {
  CompleteChunk,
  CompleteRequest__Output,
  CompleteResponse,
  ListModelsResponse,
} from '@switchboard/contracts';
import type { ModelRegistry } from '@switchboard/models';
import { DecodeLoop, type DecodeLoopLimits } from '../generation/decode-loop.js';
import type { GenerationEvent, GenerationRequest } from '../generation/generation.js';
import type { LanguageModel } from '../generation/model.js';
import type { LlmMetrics } from '../metrics.js';
import { toGenerationRequest } from './request.js';

export class CompletionService {
  /** One decoding loop per loaded model (a reloaded model gets a new one). */
  private readonly loops = new Map<LanguageModel, DecodeLoop>();

  constructor(
    private readonly registry: ModelRegistry<LanguageModel>,
    private readonly limits: DecodeLoopLimits,
    private readonly metrics: LlmMetrics,
  ) {}

  /** Deltas as chunks, then one `done` chunk with finish_reason and usage. */
  /** `owner` (the caller's key id) decides whose turn it is among waiting requests. */
  async *stream(
    request: CompleteRequest__Output,
    signal: AbortSignal,
    owner = '',
  ): AsyncGenerator<CompleteChunk> {
    // Everything that can refuse the request does so before it takes a place in the loop.
    const { id, handle: model } = this.registry.get(request.model);
    const generation = toGenerationRequest(request, model);
    const promptTokens = generation.promptIds.length;
    for await (const event of this.observed(model, generation, signal, owner)) {
      if (event.type === 'delta') {
        yield { delta: event.text, model: id, prompt_tokens: promptTokens };
      } else {
        const usage = {
          prompt_tokens: promptTokens,
          completion_tokens: event.completionTokens,
          total_tokens: promptTokens + event.completionTokens,
        };
        yield {
          done: { model: id, text: '', finish_reason: event.finishReason, usage },
          model: id,
          prompt_tokens: promptTokens,
        };
      }
    }
  }

  async complete(
    request: CompleteRequest__Output,
    signal: AbortSignal,
    owner = '',
  ): Promise<CompleteResponse> {
    let text = '';
    for await (const chunk of this.stream(request, signal, owner)) {
      if (chunk.delta !== undefined) text += chunk.delta;
      else if (chunk.done) return { ...chunk.done, text };
    }
    throw new Error('generation ended without a result');
  }

  listModels(): ListModelsResponse {
    return this.registry.listModelsResponse();
  }

  private loopFor(model: LanguageModel): DecodeLoop {
    let loop = this.loops.get(model);
    if (!loop) {
      const labels = { model: model.id };
      loop = new DecodeLoop(model, this.limits, {
        onStep: (rows) => {
          this.metrics.batchSize.observe(labels, rows);
          // The cache grows by one position per row each step.
          this.reportLoad();
        },
        onChange: () => this.reportLoad(),
        onAdmitted: (seconds) => this.metrics.queueTime.observe(labels, seconds),
        onPrefilled: (seconds, promptTokens) => {
          this.metrics.prefill.observe(labels, seconds);
          this.metrics.promptTokens.inc(labels, promptTokens);
        },
      });
      this.loops.set(model, loop);
      this.metrics.kvCacheBudget.set(labels, this.limits.cacheTokens);
    }
    return loop;
  }

  /**
   * The queue gauges over every model's loop (the autoscaler reads llm_queue_depth), and each
   * model's KV cache in use.
   */
  private reportLoad(): void {
    let waiting = 0;
    let running = 0;
    // By id: a reloaded model's old loop and its new one hold the same model's cache.
    const cached = new Map<string, number>();
    for (const [model, loop] of this.loops) {
      waiting += loop.waitingCount;
      running += loop.activeCount;
      cached.set(model.id, (cached.get(model.id) ?? 0) + loop.cachedTokens);
    }
    for (const [model, tokens] of cached) this.metrics.kvCacheTokens.set({ model }, tokens);
    this.metrics.queueDepth.set(waiting);
    this.metrics.running.set(running);
  }

  /** Wraps a generation with its metrics; counts it as cancelled when it ends unfinished. */
  private async *observed(
    model: LanguageModel,
    generation: GenerationRequest,
    signal: AbortSignal,
    owner: string,
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
      for await (const event of this.loopFor(model).generate(generation, signal, onToken, owner)) {
        if (event.type === 'done') {
          finished = true;
          metrics.requests.inc({ ...labels, finish_reason: event.finishReason });
          metrics.e2eLatency.observe(labels, (performance.now() - started) / 1000);
        }
        yield event;
      }
    } finally {
      if (!finished && signal.aborted) metrics.cancelled.inc(labels);
    }
  }
}
