// pnpm bench:load — throughput under concurrency through the whole path: clients → a gateway
// process → the worker over gRPC. For each worker, the same load twice, side by side: its default
// batching and one request at a time (`<WORKER>_MAX_BATCH=1`), so the gain is a ratio measured in
// one run on one machine.
//   llm       1, 2, 4, 8, 16, 32 streaming clients on the trained TinyStories-656K of
//             ../shared/models (greedy, up to BENCH_TOKENS tokens, prompts of several lengths):
//             aggregate and per-stream tokens/s, time to first token and inter-token latency
//             (p50/p95, as the client sees the SSE events), errors.
//   whisper   1, 4, 8 clients uploading BENCH_AUDIO_SECONDS of speech to /transcribe (the tiny
//             development model): aggregate real-time factor (audio seconds per wall second).
//   diffusion 1, 4, 8 clients asking /generate-image for 256² in BENCH_STEPS steps (the tiny
//             development pipeline): images per minute.
// BENCH_ONLY=llm|whisper|diffusion runs one part. Each client sends BENCH_ROUNDS requests one
// after the other. A refused request (503
// no_capacity above the configured capacity) is counted, not retried. Numbers, not assertions.
import { mkdtemp, rm } from 'node:fs/promises';
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

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** At least this many requests per level, so one client's percentiles have samples too. */
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
  /** Milliseconds from sending to the first token (the whole answer, for non-streamed calls). */
  ttftMs: number;
  /** Milliseconds between consecutive SSE events carrying tokens. */
  gapsMs: number[];
  totalMs: number;
  /** Tokens generated, or audio seconds transcribed, or images made. */
  units: number;
  /** `503 no_capacity, Retry-After 2`, for a refused request. */
  error?: string;
}

interface Level {
  clients: number;
  samples: Sample[];
  wallMs: number;
}

async function refusal(res: Response): Promise<string> {
  const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  const retryAfter = res.headers.get('retry-after');
  const what = res.status < 500 ? ` (${body.error?.message ?? ''})` : '';
  return `${res.status} ${body.error?.code ?? '?'}${what}${retryAfter ? ', Retry-After' : ', no Retry-After'}`;
}

/** `clients` clients, each sending `rounds` requests in turn. */
async function runLevel(
  clients: number,
  once: (client: number, round: number) => Promise<Sample>,
): Promise<Level> {
  const samples: Sample[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let round = 0; round < rounds; round++) samples.push(await once(client, round));
    }),
  );
  return { clients, samples, wallMs: performance.now() - started };
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '—');

function errorsOf(samples: Sample[]): string {
  const kinds = new Map<string, number>();
  for (const { error } of samples) if (error) kinds.set(error, (kinds.get(error) ?? 0) + 1);
  return kinds.size === 0 ? '0' : [...kinds].map(([kind, n]) => `${n} × ${kind}`).join('; ');
}

// ---- llm ----------------------------------------------------------------------------------

async function streamCompletion(url: string, key: string, prompt: string): Promise<Sample> {
  const started = performance.now();
  const res = await fetch(`${url}/query`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: LLM_MODEL, prompt, max_tokens: maxTokens, temperature: 0, stream: true }),
  });
  if (res.status !== 200) {
    return {
      ttftMs: NaN,
      gapsMs: [],
      totalMs: performance.now() - started,
      units: 0,
      error: await refusal(res),
    };
  }
  const decoder = new TextDecoder();
  let pending = '';
  const arrivals: number[] = [];
  let tokens = 0;
  let error: string | undefined;
  for await (const chunk of res.body! as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    pending += decoder.decode(chunk, { stream: true });
    const events = pending.split('\n\n');
    pending = events.pop()!;
    for (const event of events) {
      const data = event.startsWith('data: ') ? event.slice('data: '.length) : '';
      if (data === '' || data === '[DONE]') continue;
      const parsed = JSON.parse(data) as {
        delta?: string;
        usage?: { completion_tokens: number };
        error?: { code: string };
      };
      if (parsed.delta !== undefined) arrivals.push(now);
      if (parsed.usage) tokens = parsed.usage.completion_tokens;
      if (parsed.error) error = `stream error ${parsed.error.code}`;
    }
  }
  const end = performance.now();
  return {
    ttftMs: (arrivals[0] ?? NaN) - started,
    gapsMs: arrivals.slice(1).map((at, i) => at - arrivals[i]!),
    totalMs: end - started,
    units: tokens,
    error,
  };
}

function llmRow(level: Level) {
  const done = level.samples.filter((s) => !s.error);
  const tokens = done.reduce((n, s) => n + s.units, 0);
  // A stream's own rate: its tokens over the time from its first token to its end.
  const perStream = done.map((s) => s.units / ((s.totalMs - s.ttftMs) / 1000)).filter(Number.isFinite);
  const gaps = done.flatMap((s) => s.gapsMs);
  const ttft = done.map((s) => s.ttftMs);
  return {
    clients: level.clients,
    'aggregate tok/s': Math.round((tokens / level.wallMs) * 1000),
    'per-stream tok/s p50': Math.round(percentile(perStream, 50)),
    'TTFT p50 ms': ms(percentile(ttft, 50)),
    'TTFT p95 ms': ms(percentile(ttft, 95)),
    'ITL p50 ms': ms(percentile(gaps, 50)),
    'ITL p95 ms': ms(percentile(gaps, 95)),
    errors: errorsOf(level.samples),
  };
}

async function llmLoad(workerEnv: Record<string, string>): Promise<ReturnType<typeof llmRow>[]> {
  const repo = await sharedModelRepository(`llm/${LLM_MODEL}`);
  return withService(repo, 'llm', 'LLM_ADDR', workerEnv, async (url, key) => {
    const once = (client: number, round: number) =>
      streamCompletion(url, key, prompts[(client + round) % prompts.length]!);
    await runLevel(2, once); // warm-up: JIT, sockets, ORT arenas
    const rows = [];
    for (const clients of [1, 2, 4, 8, 16, 32]) rows.push(llmRow(await runLevel(clients, once)));
    return rows;
  });
}

// ---- whisper and diffusion ----------------------------------------------------------------

async function timedRequest(send: () => Promise<Response>, units: number): Promise<Sample> {
  const started = performance.now();
  const res = await send();
  const totalMs = performance.now() - started;
  if (res.status !== 200)
    return { ttftMs: totalMs, gapsMs: [], totalMs, units: 0, error: await refusal(res) };
  await res.arrayBuffer();
  return { ttftMs: totalMs, gapsMs: [], totalMs, units };
}

function requestRow(level: Level, unit: string, perMinute: boolean) {
  const done = level.samples.filter((s) => !s.error);
  const units = done.reduce((n, s) => n + s.units, 0);
  const latency = done.map((s) => s.totalMs);
  return {
    clients: level.clients,
    [unit]: perMinute
      ? ((units / level.wallMs) * 60_000).toFixed(1)
      : ((units / level.wallMs) * 1000).toFixed(2),
    'latency p50 ms': ms(percentile(latency, 50)),
    'latency p95 ms': ms(percentile(latency, 95)),
    errors: errorsOf(level.samples),
  };
}

async function whisperLoad(audio: Buffer, workerEnv: Record<string, string>) {
  const repo = await tinyWhisperRepository();
  return withService(repo, 'whisper', 'WHISPER_ADDR', workerEnv, async (url, key) => {
    const once = () =>
      timedRequest(() => {
        const form = new FormData();
        // Before the file: for audio longer than one window it must be (docs/transcription.md).
        form.append('language', 'en');
        form.append('file', new Blob([audio]), 'speech.wav');
        return fetch(`${url}/transcribe`, { method: 'POST', headers: bearer(key), body: form });
      }, audioSeconds);
    await runLevel(1, once);
    const rows = [];
    for (const clients of [1, 4, 8])
      rows.push(requestRow(await runLevel(clients, once), 'real-time factor', false));
    return rows;
  });
}

async function diffusionLoad(workerEnv: Record<string, string>) {
  const repo = await tinyDiffusionRepository();
  const objects = await mkdtemp(join(tmpdir(), 'switchboard-bench-objects-'));
  try {
    return await withService(
      repo,
      'diffusion',
      'DIFFUSION_ADDR',
      { OBJECT_STORE_DIR: objects, ...workerEnv },
      async (url, key) => {
        const once = (client: number, round: number) =>
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
        await runLevel(1, once);
        const rows = [];
        for (const clients of [1, 4, 8])
          rows.push(requestRow(await runLevel(clients, once), 'images/min', true));
        return rows;
      },
      { OBJECT_STORE_DIR: objects },
    );
  } finally {
    await rm(objects, { recursive: true, force: true });
  }
}

/**
 * A worker on `repo` and a gateway process in front of it (its own process, as deployed, so the
 * load generator does not share its event loop); `run` gets the gateway's URL and a key.
 */
async function withService<T>(
  repo: TinyModelRepository,
  name: string,
  addressVariable: string,
  workerEnv: Record<string, string>,
  run: (url: string, key: string) => Promise<T>,
  gatewayEnv: Record<string, string> = {},
): Promise<T> {
  try {
    const worker = await startWorker(name, {
      env: { MODEL_DIR: repo.modelDir, LOG_LEVEL: 'error', ...workerEnv },
    });
    try {
      const stack = await startStack({
        env: { [addressVariable]: worker.address, LOG_LEVEL: 'error', ...gatewayEnv },
        startGateway: spawnGateway,
      });
      try {
        const { key } = await createKey(stack.gateway, { rate_limit_per_minute: 1_000_000 });
        return await run(stack.gateway.url, key);
      } finally {
        await stack.stop();
      }
    } finally {
      await worker.stop();
    }
  } finally {
    await repo.remove();
  }
}

/** The two configurations' rows side by side: `<column> (batched)`, `<column> (one at a time)`. */
function sideBySide<R extends { clients: number }>(batched: R[], single: R[], columns: (keyof R & string)[]) {
  return batched.map((row, i) => ({
    clients: row.clients,
    ...Object.fromEntries(
      columns.flatMap((column) => [
        [`${column} batched`, row[column]],
        [`${column} 1-at-a-time`, single[i]![column]],
      ]),
    ),
  }));
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

// ---- run ----------------------------------------------------------------------------------

process.stdout.write(
  `\nload bench: ${rounds} requests per client per level (at least ${minRequests} per level), ${ortThreads} ORT thread(s) per worker, CPU\n`,
);

if (!only || only === 'llm') await llmPart();
if (!only || only === 'whisper') await whisperPart();
if (!only || only === 'diffusion') await diffusionPart();

async function llmPart() {
  const llmBatched = await llmLoad({});
  const llmSingle = await llmLoad({ LLM_MAX_BATCH: '1' });
  process.stdout.write(`\nllm — ${LLM_MODEL}, streaming /query, up to ${maxTokens} tokens, greedy\n`);
  process.stdout.write('batched (default LLM_MAX_BATCH):\n');
  console.table(llmBatched);
  process.stdout.write('one at a time (LLM_MAX_BATCH=1):\n');
  console.table(llmSingle);
  const at = (rows: typeof llmBatched, clients: number) => rows.find((r) => r.clients === clients)!;
  const ttftP95 = (rows: typeof llmBatched, clients: number) => Number(at(rows, clients)['TTFT p95 ms']);
  console.table(
    llmBatched.map((row) => ({
      clients: row.clients,
      'aggregate tok/s, batched ÷ 1-at-a-time': ratio(
        row['aggregate tok/s'],
        at(llmSingle, row.clients)['aggregate tok/s'],
      ),
      'aggregate tok/s ÷ 1 client (batched)': ratio(
        row['aggregate tok/s'],
        at(llmBatched, 1)['aggregate tok/s'],
      ),
      'TTFT p95 ÷ 1 client (batched)': ratio(Number(row['TTFT p95 ms']), ttftP95(llmBatched, 1)),
    })),
  );
  process.stdout.write(
    `goals at 8 clients (batched): aggregate ≥ 4× one client → ${ratio(at(llmBatched, 8)['aggregate tok/s'], at(llmBatched, 1)['aggregate tok/s'])}; TTFT p95 ≤ 3× one client → ${ratio(ttftP95(llmBatched, 8), ttftP95(llmBatched, 1))}\n`,
  );
}

async function whisperPart() {
  const audio = await makeAudioFixtures(audioSeconds);
  try {
    const whisperBatched = await whisperLoad(audio.long, {});
    const whisperSingle = await whisperLoad(audio.long, { WHISPER_MAX_BATCH: '1' });
    process.stdout.write(`\nwhisper — tiny development model, /transcribe of ${audioSeconds} s of speech\n`);
    console.table(
      sideBySide(whisperBatched, whisperSingle, ['real-time factor', 'latency p95 ms', 'errors']),
    );
  } finally {
    await audio.remove();
  }
}

async function diffusionPart() {
  const diffusionBatched = await diffusionLoad({});
  const diffusionSingle = await diffusionLoad({ DIFFUSION_MAX_BATCH: '1' });
  process.stdout.write(`\ndiffusion — tiny development pipeline, /generate-image 256×256, ${steps} steps\n`);
  console.table(sideBySide(diffusionBatched, diffusionSingle, ['images/min', 'latency p95 ms', 'errors']));
}
