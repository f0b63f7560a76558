// pnpm bench:load — throughput under concurrency through the whole path: clients → a gateway
// process → the worker over gRPC. Each worker runs twice side by side, its default batching and
// one request at a time (`<WORKER>_MAX_BATCH=1`), so the gain is a ratio measured in one run:
//   llm       1, 2, 4, 8, 16, 32 streaming clients on the trained TinyStories-656K of the
//             published model files beside the checkout (greedy, up to BENCH_TOKENS tokens, prompts of several lengths):
//             aggregate and per-stream tokens/s, time to first token and inter-token latency
//             (p50/p95, as the client sees the SSE events), errors.
//   whisper   1, 4, 8 clients uploading BENCH_AUDIO_SECONDS of speech to /transcribe (the tiny
//             development model): aggregate real-time factor (audio seconds per wall second).
//   diffusion 1, 4, 8 clients asking /generate-image for 256² in BENCH_STEPS steps (the tiny
//             development pipeline): images per minute.
// Both configurations run at once, and every level is measured for each in turn, BENCH_REPEATS
// times; each figure is the median over the repeats. On a shared machine whose speed drifts, that
// keeps the ratios honest. Each client sends requests one after the other, at least
// BENCH_MIN_REQUESTS per llm level in all (8 for whisper, 16 for diffusion); a refused request (503 no_capacity above the configured
// capacity) is counted, not retried. BENCH_ONLY=llm|whisper|diffusion runs one part. Numbers, not
// assertions.
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, createKey } from '../support/admin.js';
import { makeAudioFixtures } from '../support/audio.js';
import { spawnGateway } from '../support/gateway.js';
import { startStack } from '../support/stack.js';
import {
  sharedModelRepository,
  startWorker,
  tinyDiffusionRepository,
  tinyWhisperRepository,
  type TinyModelRepository,
} from '../support/worker.js';
import { percentile } from './stats.js';
import { streamedQuery } from './streamed-query.js';

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const minRequests = Number(process.env.BENCH_MIN_REQUESTS ?? 24);
const maxTokens = Number(process.env.BENCH_TOKENS ?? 128);
const ortThreads = process.env.BENCH_ORT_THREADS ?? '1';
const audioSeconds = Number(process.env.BENCH_AUDIO_SECONDS ?? 60);
const steps = Number(process.env.BENCH_STEPS ?? 8);
const only = process.env.BENCH_ONLY;
const LLM_MODEL = 'TinyStories-656K';
const prompts = [
  'Once upon a time',
  'Tom and his dog went to the park. They played with a red ball until',
  'Lily wanted a cake',
  'One day, a little bird sat on a branch and looked at the big blue sky. It wanted to',
];

/** What one request looked like from its client. */
interface Sample {
  /** Milliseconds from sending to the first token (to the whole answer, for the others). */
  ttftMs: number;
  /** Milliseconds between consecutive SSE events carrying tokens. */
  gapsMs: number[];
  totalMs: number;
  /** Tokens generated, or audio seconds transcribed, or images made. */
  units: number;
  /** `503 no_capacity, Retry-After`, for a refused request. */
  error?: string;
}

interface Level {
  clients: number;
  samples: Sample[];
  wallMs: number;
}

/** One configuration's client: request `round` of client `client`. */
type Client = (client: number, round: number) => Promise<Sample>;

/** A row of figures for one level; the median over the repeats is taken figure by figure. */
type Figures = Record<string, number>;

/** `clients` clients, each sending requests in turn, `requests` or a little more in all. */
async function runLevel(clients: number, send: Client, requests: number): Promise<Level> {
  const samples: Sample[] = [];
  const each = Math.max(1, Math.ceil(requests / clients));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let round = 0; round < each; round++) samples.push(await send(client, round));
    }),
  );
  return { clients, samples, wallMs: performance.now() - started };
}

interface Measured {
  clients: number;
  figures: Figures;
  /** Refused requests over all repeats, by kind. */
  errors: string;
}

/**
 * Every level for both configurations in turn, `repeats` times; per level and configuration, the
 * median of each figure over the repeats, and the errors of all of them.
 */
async function compare(
  levels: readonly number[],
  clients: readonly [Client, Client],
  figuresOf: (level: Level) => Figures,
  requests: number,
): Promise<[Measured[], Measured[]]> {
  for (const send of clients) await runLevel(2, send, 2); // warm-up: JIT, sockets, ONNX Runtime arenas
  const runs = clients.map(() => levels.map(() => [] as Level[]));
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const [li, level] of levels.entries()) {
      for (const [ci, send] of clients.entries()) {
        runs[ci]![li]!.push(await runLevel(level, send, requests));
      }
    }
  }
  const summary = (measured: Level[][]): Measured[] =>
    measured.map((levelRuns, li) => {
      const rows = levelRuns.map(figuresOf);
      const figures = Object.fromEntries(
        Object.keys(rows[0]!).map((name) => [
          name,
          percentile(
            rows.map((row) => row[name]!),
            50,
          ),
        ]),
      );
      return { clients: levels[li]!, figures, errors: errorsOf(levelRuns.flatMap((run) => run.samples)) };
    });
  return [summary(runs[0]!), summary(runs[1]!)];
}

function errorsOf(samples: Sample[]): string {
  const kinds = new Map<string, number>();
  for (const { error } of samples) if (error) kinds.set(error, (kinds.get(error) ?? 0) + 1);
  return kinds.size === 0 ? '0' : [...kinds].map(([kind, n]) => `${n} × ${kind}`).join('; ');
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** One configuration's table: its figures and errors per level. */
const table = (rows: Measured[]) =>
  rows.map(({ clients, figures, errors }) => ({
    clients,
    ...Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, round1(value)])),
    errors,
  }));

/** Both configurations' chosen figures side by side. */
function sideBySide(batched: Measured[], single: Measured[], names: string[]) {
  return batched.map((row, i) => ({
    clients: row.clients,
    ...Object.fromEntries(
      names.flatMap((name) => [
        [`${name} batched`, round1(row.figures[name]!)],
        [`${name} 1-at-a-time`, round1(single[i]!.figures[name]!)],
      ]),
    ),
    'errors batched': row.errors,
    'errors 1-at-a-time': single[i]!.errors,
  }));
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

// ---- services -----------------------------------------------------------------------------

interface Service {
  url: string;
  key: string;
}

/**
 * Two workers on `repo` (the default configuration and `<WORKER>_MAX_BATCH=1`), each behind a
 * gateway process of its own (as deployed, so the load generator does not share its event loop).
 */
async function withServices<T>(
  repo: TinyModelRepository,
  name: string,
  env: { worker?: Record<string, string>; gateway?: Record<string, string> },
  run: (batched: Service, single: Service) => Promise<T>,
): Promise<T> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const services: Service[] = [];
    for (const maxBatch of [undefined, '1']) {
      const worker = await startWorker(name, {
        env: {
          MODEL_DIR: repo.modelDir,
          LOG_LEVEL: 'error',
          ORT_INTRA_OP_THREADS: ortThreads,
          ...env.worker,
          ...(maxBatch ? { [`${name.toUpperCase()}_MAX_BATCH`]: maxBatch } : {}),
        },
      });
      stops.push(() => worker.stop());
      const stack = await startStack({
        env: { [`${name.toUpperCase()}_ADDR`]: worker.address, LOG_LEVEL: 'error', ...env.gateway },
        startGateway: spawnGateway,
      });
      stops.push(() => stack.stop());
      const { key } = await createKey(stack.gateway, {
        tier: 'enterprise',
        rate_limit_per_minute: 1_000_000,
      });
      services.push({ url: stack.gateway.url, key });
    }
    return await run(services[0]!, services[1]!);
  } finally {
    for (const stop of stops.reverse()) await stop();
    await repo.remove();
  }
}

// ---- llm ----------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

async function streamCompletion({ url, key }: Service, prompt: string): Promise<Sample> {
  const started = performance.now();
  const streamed = await streamedQuery(agent, url, key, {
    model: LLM_MODEL,
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
  });
  const totalMs = performance.now() - started;
  if (streamed.status !== 200) {
    const retryAfter = streamed.retryAfter ? ', Retry-After' : ', no Retry-After';
    return {
      ttftMs: NaN,
      gapsMs: [],
      totalMs,
      units: 0,
      error: `${streamed.status} ${streamed.code}${retryAfter}`,
    };
  }
  const arrivals = streamed.deltaArrivals;
  return {
    ttftMs: (arrivals[0] ?? NaN) - started,
    gapsMs: arrivals.slice(1).map((at, i) => at - arrivals[i]!),
    totalMs,
    units: streamed.completionTokens,
    error: streamed.code ? `stream error ${streamed.code}` : undefined,
  };
}

function llmFigures(level: Level): Figures {
  const done = level.samples.filter((s) => !s.error);
  const tokens = done.reduce((n, s) => n + s.units, 0);
  // A stream's own rate: its tokens over the time from its first token to its end.
  const perStream = done.map((s) => s.units / ((s.totalMs - s.ttftMs) / 1000)).filter(Number.isFinite);
  const gaps = done.flatMap((s) => s.gapsMs);
  const ttft = done.map((s) => s.ttftMs);
  return {
    'aggregate tok/s': (tokens / level.wallMs) * 1000,
    'per-stream tok/s p50': percentile(perStream, 50),
    'TTFT p50 ms': percentile(ttft, 50),
    'TTFT p95 ms': percentile(ttft, 95),
    'ITL p50 ms': percentile(gaps, 50),
    'ITL p95 ms': percentile(gaps, 95),
  };
}

async function llmPart(): Promise<void> {
  const repo = await sharedModelRepository(`llm/${LLM_MODEL}`);
  const [batched, single] = await withServices(repo, 'llm', {}, (a, b) => {
    const client =
      (service: Service): Client =>
      (client, round) =>
        streamCompletion(service, prompts[(client + round) % prompts.length]!);
    return compare([1, 2, 4, 8, 16, 32], [client(a), client(b)], llmFigures, minRequests);
  });
  process.stdout.write(`\nllm — ${LLM_MODEL}, streaming /query, up to ${maxTokens} tokens, greedy\n`);
  process.stdout.write('batched (default LLM_MAX_BATCH):\n');
  console.table(table(batched));
  process.stdout.write('one at a time (LLM_MAX_BATCH=1):\n');
  console.table(table(single));
  const at = (rows: Measured[], clients: number) => rows.find((r) => r.clients === clients)!.figures;
  const tokS = (rows: Measured[], clients: number) => at(rows, clients)['aggregate tok/s']!;
  const ttftP95 = (rows: Measured[], clients: number) => at(rows, clients)['TTFT p95 ms']!;
  console.table(
    batched.map(({ clients }) => ({
      clients,
      'aggregate tok/s, batched ÷ 1-at-a-time': ratio(tokS(batched, clients), tokS(single, clients)),
      'aggregate tok/s ÷ 1 client (batched)': ratio(tokS(batched, clients), tokS(batched, 1)),
      'TTFT p95 ÷ 1 client (batched)': ratio(ttftP95(batched, clients), ttftP95(batched, 1)),
    })),
  );
  process.stdout.write(
    `goals at 8 clients (batched): aggregate ≥ 4× one client → ${ratio(tokS(batched, 8), tokS(batched, 1))}; ` +
      `TTFT p95 ≤ 3× one client → ${ratio(ttftP95(batched, 8), ttftP95(batched, 1))}\n`,
  );
}

// ---- whisper and diffusion ----------------------------------------------------------------

async function timedRequest(send: () => Promise<Response>, units: number): Promise<Sample> {
  const started = performance.now();
  const res = await send();
  const body = await res.text();
  const totalMs = performance.now() - started;
  if (res.status === 200) return { ttftMs: totalMs, gapsMs: [], totalMs, units };
  const code = /"code":"([a-z_]+)"/.exec(body)?.[1];
  const retryAfter = res.headers.get('retry-after') ? ', Retry-After' : ', no Retry-After';
  return { ttftMs: totalMs, gapsMs: [], totalMs, units: 0, error: `${res.status} ${code}${retryAfter}` };
}

/** Throughput in units per second (× 60 for per minute), and latency. */
const requestFigures =
  (unit: string, per: number) =>
  (level: Level): Figures => {
    const done = level.samples.filter((s) => !s.error);
    const latency = done.map((s) => s.totalMs);
    return {
      [unit]: (done.reduce((n, s) => n + s.units, 0) / level.wallMs) * 1000 * per,
      'latency p50 ms': percentile(latency, 50),
      'latency p95 ms': percentile(latency, 95),
    };
  };

async function whisperPart(): Promise<void> {
  const audio = await makeAudioFixtures(audioSeconds);
  try {
    const transcribe =
      ({ url, key }: Service): Client =>
      () =>
        timedRequest(() => {
          const form = new FormData();
          // Before the file: for audio longer than one window it must be (docs/transcription.md).
          form.append('language', 'en');
          form.append('file', new Blob([audio.long]), 'speech.wav');
          return fetch(`${url}/transcribe`, { method: 'POST', headers: bearer(key), body: form });
        }, audioSeconds);
    const [batched, single] = await withServices(await tinyWhisperRepository(), 'whisper', {}, (a, b) =>
      compare([1, 4, 8], [transcribe(a), transcribe(b)], requestFigures('real-time factor', 1), 8),
    );
    process.stdout.write(`\nwhisper — tiny development model, /transcribe of ${audioSeconds} s of speech\n`);
    console.table(sideBySide(batched, single, ['real-time factor', 'latency p95 ms']));
  } finally {
    await audio.remove();
  }
}

async function diffusionPart(): Promise<void> {
  const objects = await mkdtemp(join(tmpdir(), 'switchboard-bench-objects-'));
  try {
    const generate =
      ({ url, key }: Service): Client =>
      (client, round) =>
        timedRequest(
          () =>
            fetch(`${url}/generate-image`, {
              method: 'POST',
              headers: { ...bearer(key), 'content-type': 'application/json' },
              body: JSON.stringify({
                prompt: 'a lighthouse at dusk',
                width: 256,
                height: 256,
                steps,
                seed: client * 100 + round,
              }),
            }),
          1,
        );
    const env = { OBJECT_STORE_DIR: objects };
    const [batched, single] = await withServices(
      await tinyDiffusionRepository(),
      'diffusion',
      { worker: env, gateway: env },
      (a, b) => compare([1, 4, 8], [generate(a), generate(b)], requestFigures('images/min', 60), 16),
    );
    process.stdout.write(
      `\ndiffusion — tiny development pipeline, /generate-image 256×256, ${steps} steps\n`,
    );
    console.table(sideBySide(batched, single, ['images/min', 'latency p95 ms']));
  } finally {
    await rm(objects, { recursive: true, force: true });
  }
}

// ---- run ----------------------------------------------------------------------------------

process.stdout.write(
  `\nload bench: medians of ${repeats} repeats, at least ${minRequests} requests per level, ` +
    `${ortThreads} ONNX Runtime thread(s) per worker, CPU\n`,
);
if (!only || only === 'llm') await llmPart();
if (!only || only === 'whisper') await whisperPart();
if (!only || only === 'diffusion') await diffusionPart();
agent.destroy();
