// pnpm bench:llm — generation speed of the llm worker on the tiny development model, and what the
// gateway costs on top: (a) the same runtime in-process (no gRPC, no HTTP), (b) POST /query
// through the gateway, (c) the same streamed over SSE; then aggregate tokens/s with 1, 4 and 8
// concurrent streaming clients. Greedy decoding on a prompt the tiny model never ends early, so
// every request generates exactly BENCH_TOKENS tokens. Numbers, not assertions.
import { resolve } from 'node:path';
import { useLocalModels } from '@switchboard/models';
import { loadCausalLm } from '@switchboard/llm/dist/adapters/causal-lm.js';
import { generate } from '@switchboard/llm/dist/generation/generate.js';
import { bearer, createKey } from '../support/admin.js';
import { startStack } from '../support/stack.js';
import { startWorker, tinyLlmRepository } from '../support/worker.js';

const tokens = Number(process.env.BENCH_TOKENS ?? 256);
const runs = Number(process.env.BENCH_RUNS ?? 20);
const prompt = 'Tell me a story';

interface Sample {
  ttftMs: number;
  totalMs: number;
  tokens: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

function summarize(name: string, samples: Sample[]) {
  const totalTokens = samples.reduce((n, s) => n + s.tokens, 0);
  const totalMs = samples.reduce((n, s) => n + s.totalMs, 0);
  return {
    name,
    'tokens/s': Math.round((totalTokens / totalMs) * 1000),
    'TTFT p50 ms': percentile(
      samples.map((s) => s.ttftMs),
      50,
    ).toFixed(2),
    'TTFT p95 ms': percentile(
      samples.map((s) => s.ttftMs),
      95,
    ).toFixed(2),
  };
}

async function repeat(fn: () => Promise<Sample>): Promise<Sample[]> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up: JIT, sockets, ORT arenas
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await fn());
  return samples;
}

const repo = await tinyLlmRepository();
const worker = await startWorker('llm', {
  env: { MODEL_DIR: repo.modelDir, LLM_CONCURRENCY: '8', LLM_QUEUE_DEPTH: '16', LOG_LEVEL: 'error' },
});
const stack = await startStack({ env: { LLM_ADDR: worker.address, LOG_LEVEL: 'error' } });
try {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 1_000_000 });
  const body = { prompt, max_tokens: tokens, temperature: 0 };

  // (a) In-process, same adapter and loop as the worker.
  useLocalModels(resolve(repo.modelDir, 'llm'));
  const model = await loadCausalLm(
    { id: repo.modelId, dir: '', description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
  const inProcess = await repeat(async () => {
    const started = performance.now();
    let first: number | undefined;
    let count = 0;
    const request = {
      promptIds: model.encode(prompt),
      maxTokens: tokens,
      temperature: 0,
      topP: 1,
      seed: 0n,
      stop: [],
    };
    const onToken = () => {
      first ??= performance.now();
      count += 1;
    };
    for await (const _event of generate(model, request, new AbortController().signal, { onToken })) {
      // consumed for its side effects
    }
    return { ttftMs: first! - started, totalMs: performance.now() - started, tokens: count };
  });

  const post = (stream: boolean) =>
    fetch(`${stack.gateway.url}/query`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream }),
    });

  // (b) Non-streamed: the first token reaches the client with the whole answer.
  const unary = await repeat(async () => {
    const started = performance.now();
    const res = await post(false);
    const done = (await res.json()) as { usage: { completion_tokens: number } };
    const ms = performance.now() - started;
    return { ttftMs: ms, totalMs: ms, tokens: done.usage.completion_tokens };
  });

  // (c) Streamed: time to the first delta event.
  const streamOnce = async (): Promise<Sample> => {
    const started = performance.now();
    const res = await post(true);
    const decoder = new TextDecoder();
    let first: number | undefined;
    let text = '';
    for await (const chunk of res.body! as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (first === undefined && text.includes('"delta"')) first = performance.now();
    }
    const usage = /"completion_tokens":(\d+)/.exec(text);
    return {
      ttftMs: (first ?? NaN) - started,
      totalMs: performance.now() - started,
      tokens: Number(usage?.[1]),
    };
  };
  const streamed = await repeat(streamOnce);

  const table = [
    summarize('(a) in-process', inProcess),
    summarize('(b) gateway, JSON (TTFT = whole response)', unary),
    summarize('(c) gateway, SSE', streamed),
  ];

  const concurrency = [];
  for (const clients of [1, 4, 8]) {
    await Promise.all(Array.from({ length: clients }, streamOnce)); // warm-up
    const started = performance.now();
    const rounds = Math.max(1, Math.floor(runs / clients));
    const samples: Sample[] = [];
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = 0; i < rounds; i++) samples.push(await streamOnce());
      }),
    );
    const wall = performance.now() - started;
    concurrency.push({
      clients,
      'aggregate tokens/s': Math.round((samples.reduce((n, s) => n + s.tokens, 0) / wall) * 1000),
      'TTFT p50 ms': percentile(
        samples.map((s) => s.ttftMs),
        50,
      ).toFixed(2),
      'TTFT p95 ms': percentile(
        samples.map((s) => s.ttftMs),
        95,
      ).toFixed(2),
    });
  }

  process.stdout.write(
    `\nllm bench: tiny development model, ${tokens} tokens per request, ${runs} runs, greedy, CPU\n`,
  );
  console.table(table);
  console.table(concurrency);
  await model.dispose();
} finally {
  await stack.stop();
  await worker.stop();
  await repo.remove();
}
