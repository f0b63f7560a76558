// The llm worker's Prometheus metrics, all labelled by model where it applies.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createLlmMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queueDepth: new Gauge({
      name: 'llm_queue_depth',
      help: 'Requests waiting for a place in a decoding batch.',
      registers,
    }),
    running: new Gauge({
      name: 'llm_active_generations',
      help: 'Generations running now (decoding in a batch, or having their prompt read).',
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: 'llm_time_to_first_token_seconds',
      help: 'From the request reaching the worker to its first generated token (waiting for a place and reading the prompt included).',
      labelNames: ['model'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    interTokenLatency: new Histogram({
      name: 'llm_inter_token_latency_seconds',
      help: 'Time between consecutive generated tokens.',
      labelNames: ['model'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
      registers,
    }),
    e2eLatency: new Histogram({
      name: 'llm_e2e_request_latency_seconds',
      help: 'From the request reaching the worker to its last token, for generations that finished (stop or length): waiting, reading the prompt and decoding.',
      labelNames: ['model'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80],
      registers,
    }),
    queueTime: new Histogram({
      name: 'llm_queue_time_seconds',
      help: 'Time a request waited for a place in the decoding batch, from reaching the worker to being admitted.',
      labelNames: ['model'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    prefill: new Histogram({
      name: 'llm_prefill_seconds',
      help: "Time from a request's admission to its whole prompt being read into the KV cache (a long prompt is read in chunks between decoding steps, which this includes).",
      labelNames: ['model'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    promptTokens: new Counter({
      name: 'llm_prompt_tokens_total',
      help: 'Prompt tokens read into the KV cache (prefill), counted when a prompt has been read whole.',
      labelNames: ['model'],
      registers,
    }),
    kvCacheTokens: new Gauge({
      name: 'llm_kv_cache_tokens',
      help: "KV cache positions held now: the decoding batch's rows, each padded to the longest, plus prompts being read in chunks. Compare with llm_kv_cache_budget_tokens.",
      labelNames: ['model'],
      registers,
    }),
    kvCacheBudget: new Gauge({
      name: 'llm_kv_cache_budget_tokens',
      help: 'KV cache positions the batch may reserve (LLM_KV_CACHE_TOKENS): requests join only while the batch stays within it; one request too long for it runs alone.',
      labelNames: ['model'],
      registers,
    }),
    batchSize: new Histogram({
      name: 'llm_batch_size',
      help: 'Generations decoded together in one model pass (continuous batching).',
      labelNames: ['model'],
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    }),
    tokensGenerated: new Counter({
      name: 'llm_tokens_generated_total',
      help: 'Completion tokens generated.',
      labelNames: ['model'],
      registers,
    }),
    requests: new Counter({
      name: 'llm_requests_total',
      help: 'Finished generations by finish reason (stop, length).',
      labelNames: ['model', 'finish_reason'],
      registers,
    }),
    cancelled: new Counter({
      name: 'llm_generations_cancelled_total',
      help: 'Generations stopped because the caller went away.',
      labelNames: ['model'],
      registers,
    }),
  };
}

export type LlmMetrics = ReturnType<typeof createLlmMetrics>;
