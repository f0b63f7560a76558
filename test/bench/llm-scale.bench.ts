// pnpm bench:llm-scale — the decoding loop's own CPU cost next to the model pass, at real
// vocabulary sizes (32,000 as Llama 2, 128,256 as Llama 3, 151,936 as Qwen 2.5). The models are
// tiny random-weight Llamas from @switchboard/models-dev (hidden size BENCH_HIDDEN, 2 layers) with
// those exact vocabularies, so the pass is cheap and what scales with the vocabulary shows: the
// lm_head in the pass, and in the loop sampling over every logit. lm_head is scaled
// (BENCH_LOGIT_SCALE) so the logits spread like a trained model's (standard deviation about 4; the
// first table prints the spread and the entropy it gives). Per vocabulary, batch (BENCH_BATCHES)
// and sampling (greedy; temperature 0.7; temperature 0.7 with top_p 0.9), all in ms per step:
//   pass      one decoding step of `batch` rows through the KvBatch alone (no loop), the cache
//             growing from the prompt (BENCH_PROMPT_TOKENS) over BENCH_STEPS steps, median step;
//             "ORT" is the part spent in the ONNX Runtime session itself.
//   loop      the real DecodeLoop running `batch` generations of BENCH_STEPS tokens with two stop
//             strings, in-process: the steady-state step period (all rows decoding, from the
//             loop's onStep hook) minus the KvBatch step measured inside that same run.
//   its parts, measured alone on the same shapes: sampleToken on logits rows the loop produced
//             (per row × batch), IncrementalDecoder.push over the tokens it generated with the
//             model's own tokenizer decode (per token × batch), StopMatcher.push over the text
//             that gave (per token × batch). The cache work (a row joining: its prompt's pass and
//             the copy of the cache; a row leaving: the copy) is per occurrence, in its own table
//             with the step's work outside ONNX Runtime (pass − ORT).
//   grpc      the worker's cost of streaming the step's tokens over gRPC: the real llm worker (a
//             child process, BENCH_GRPC=0 skips it) serves `batch` concurrent greedy generations,
//             as StreamComplete calls (a message per piece of text) and as Complete calls (one
//             answer, made inside the worker from the same events), in turns, 5 runs each; the
//             difference of the medians of its CPU ms per step (all its threads, from Linux's
//             schedstat; steps counted by llm_batch_size) and of its wall ms per step. CPU time is
//             the figure to read: the wall period moves with how the worker and this process
//             share the cores. It does not depend on the sampling, so the greedy figure stands in
//             every row of a vocabulary and batch.
//   share     loop / (loop + pass).
// ONNX Runtime uses BENCH_ORT_THREADS threads here and in the worker. Numbers, not assertions.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoModelForCausalLM, env } from '@huggingface/transformers';
import { Llm, type CompleteChunk__Output } from '@switchboard/contracts';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import { buildTinyLlama } from '@switchboard/models-dev';
import { SeededRandom, transformersDeviceOptions, useLocalModels } from '@switchboard/models';
import { loadCausalLm } from '@switchboard/llm/dist/adapters/causal-lm.js';
import { KvBatch, type Forward } from '@switchboard/llm/dist/adapters/kv-cache.js';
import { DecodeLoop } from '@switchboard/llm/dist/generation/decode-loop.js';
import type { GenerationRequest } from '@switchboard/llm/dist/generation/generation.js';
import type { DecodeBatch, LanguageModel } from '@switchboard/llm/dist/generation/model.js';
import { sampleToken, type SamplingParams } from '@switchboard/llm/dist/generation/sampler.js';
import { StopMatcher } from '@switchboard/llm/dist/generation/stop-strings.js';
import { IncrementalDecoder, PROMPT_CONTEXT_TOKENS } from '@switchboard/llm/dist/generation/text-decoder.js';
import { testClusterSecret } from '../support/gateway.js';
import { startWorker, type WorkerProcess } from '../support/worker.js';
import { percentile } from './stats.js';

const list = (value: string) => value.split(',').map(Number);
const vocabs = list(process.env.BENCH_VOCABS ?? '32000,128256,151936');
const batches = list(process.env.BENCH_BATCHES ?? '1,8,16');
const steps = Number(process.env.BENCH_STEPS ?? 64);
const hiddenSize = Number(process.env.BENCH_HIDDEN ?? 32);
const logitScale = Number(process.env.BENCH_LOGIT_SCALE ?? 4);
const promptTokens = Number(process.env.BENCH_PROMPT_TOKENS ?? 32);
const ortThreads = Number(process.env.BENCH_ORT_THREADS ?? 1);
const withGrpc = process.env.BENCH_GRPC !== '0';
/** Steps left out at the start of a run (JIT, arenas, rows still joining). */
const WARM_STEPS = 8;
/** Runs of the worker, streamed and unary, whose medians give the gRPC figure. */
const GRPC_RUNS = 5;
/** Two stop strings that random text does not complete, so every generation runs to its length. */
const STOPS = ['\n\nUser:', '</answer>'];
const MODES: readonly (SamplingParams & { name: string })[] = [
  { name: 'greedy', temperature: 0, topP: 1 },
  { name: 'T 0.7', temperature: 0.7, topP: 1 },
  { name: 'T 0.7, top_p 0.9', temperature: 0.7, topP: 0.9 },
];
const PROMPT =
  'Once upon a time, in a small town by the sea, there lived an old clockmaker who repaired every clock ' +
  'in town and told the children stories about the ships that came into the harbour at night.';

const median = (values: readonly number[]) => percentile(values, 50);
const ms = (value: number) => Number(value.toFixed(value < 1 ? 3 : 2));
const modelId = (vocab: number) => `llama-vocab-${vocab}`;

/**
 * CPU ms a process has used so far, all its threads (ONNX Runtime's and the GC's included), from
 * Linux's per-thread schedstat (nanoseconds, unlike the 10 ms ticks of /proc/<pid>/stat); NaN
 * elsewhere. Threads that ended before the call are not counted, so only differences over a run
 * in which the threads live on mean anything.
 */
function cpuMs(pid: number): number {
  try {
    const dir = `/proc/${pid}/task`;
    let ns = 0;
    for (const tid of readdirSync(dir)) {
      ns += Number(readFileSync(`${dir}/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/** Median ms of `fn` over `runs` runs (after one unmeasured run). */
function timeMedian(runs: number, fn: (run: number) => void): number {
  fn(0);
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    fn(run);
    times.push(performance.now() - started);
  }
  return median(times);
}

// ---- the model pass alone -------------------------------------------------------------------

interface PassFigures {
  stepMs: number;
  ortMs: number;
  joinMs: number;
  removeMs: number;
  /** Logits rows of the last step, for the spread of the logits. */
  rows: Float32Array[];
}

interface SessionLike {
  run(feeds: unknown, ...rest: unknown[]): Promise<unknown>;
}

/**
 * A KvBatch over the model's own Transformers.js forward (as the adapter builds it), timing the
 * ONNX Runtime session's runs inside it: `batch` prompts join, then greedy steps.
 */
async function measurePass(id: string, promptIds: number[], batch: number): Promise<PassFigures> {
  const model = await AutoModelForCausalLM.from_pretrained(id, {
    local_files_only: true,
    dtype: 'fp32',
    ...transformersDeviceOptions({ providers: ['cpu'], deviceId: 0, intraOpThreads: ortThreads }),
  });
  const session = (model as unknown as { sessions: Record<string, SessionLike> }).sessions['model']!;
  const run = session.run.bind(session);
  let ortMs = 0;
  session.run = async (...args) => {
    const started = performance.now();
    try {
      return await run(...args);
    } finally {
      ortMs += performance.now() - started;
    }
  };
  const forward: Forward = (inputs) => (model as unknown as { forward: Forward }).forward(inputs);
  const kv = new KvBatch(forward);
  try {
    // A first round unmeasured (JIT, ONNX Runtime's arenas at these shapes), then the measured one.
    let logits = await kv.join(Array.from({ length: batch }, () => promptIds));
    for (let step = 0; step < steps; step++) logits = await kv.step(logits.map(argmax));
    while (kv.size > 0) kv.remove(kv.size - 1);
    logits = await kv.join(Array.from({ length: batch }, () => promptIds));
    const stepTimes: number[] = [];
    const ortTimes: number[] = [];
    for (let step = 0; step < steps; step++) {
      const tokens = logits.map(argmax);
      ortMs = 0;
      const started = performance.now();
      logits = await kv.step(tokens);
      if (step >= WARM_STEPS) {
        stepTimes.push(performance.now() - started);
        ortTimes.push(ortMs);
      }
    }
    const rows = logits.map((row) => row.slice());
    // A row joining the batch (its prompt's pass, then the cache copied with it) and leaving.
    const joins: number[] = [];
    const removes: number[] = [];
    for (let i = 0; i < 8; i++) {
      let started = performance.now();
      await kv.join([promptIds]);
      joins.push(performance.now() - started);
      started = performance.now();
      kv.remove(kv.size - 1);
      removes.push(performance.now() - started);
    }
    return {
      stepMs: median(stepTimes),
      ortMs: median(ortTimes),
      joinMs: median(joins.slice(1)),
      removeMs: median(removes.slice(1)),
      rows,
    };
  } finally {
    await kv.dispose();
    await model.dispose();
  }
}

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

/** Standard deviation of a row's logits, and the entropy (nats) of softmax(logits / t). */
function spread(row: Float32Array, temperatures: readonly number[]): { std: number; entropy: number[] } {
  let mean = 0;
  for (const v of row) mean += v / row.length;
  let variance = 0;
  for (const v of row) variance += (v - mean) ** 2 / row.length;
  const max = row.reduce((a, b) => Math.max(a, b), -Infinity);
  const entropy = temperatures.map((t) => {
    let total = 0;
    let weighted = 0;
    for (const v of row) {
      const z = (v - max) / t;
      const w = Math.exp(z);
      total += w;
      weighted += w * z;
    }
    return Math.log(total) - weighted / total;
  });
  return { std: Math.sqrt(variance), entropy };
}

// ---- the decoding loop ----------------------------------------------------------------------

interface LoopFigures {
  /** Steady-state ms per step (all rows decoding). */
  periodMs: number;
  /** ms per step inside the KvBatch, in the same steps. */
  batchStepMs: number;
  /** Row 0's tokens, in order, and logits rows the loop sampled from. */
  tokens: number[];
  rows: Float32Array[];
}

/** The model with its batch's steps timed and its tokens and logits recorded. */
function observed(
  model: LanguageModel,
  record: { stepMs: number[]; tokens: number[]; rows: Float32Array[] },
) {
  const openBatch = (): DecodeBatch => {
    const batch = model.openBatch();
    return {
      get size() {
        return batch.size;
      },
      get cachedTokens() {
        return batch.cachedTokens;
      },
      join: (prompts) => batch.join(prompts),
      add: (sequence) => batch.add(sequence),
      remove: (row) => batch.remove(row),
      step: async (tokens) => {
        const started = performance.now();
        const logits = await batch.step(tokens);
        record.stepMs.push(performance.now() - started);
        record.tokens.push(tokens[0]!);
        if (record.rows.length < 16 && record.stepMs.length > WARM_STEPS)
          record.rows.push(logits[0]!.slice());
        return logits;
      },
      dispose: () => batch.dispose(),
    };
  };
  return { ...model, openBatch };
}

async function measureLoop(
  model: LanguageModel,
  promptIds: number[],
  batch: number,
  mode: SamplingParams,
): Promise<LoopFigures> {
  const record = { stepMs: [] as number[], tokens: [] as number[], rows: [] as Float32Array[] };
  const stamps: { at: number; rows: number; index: number }[] = [];
  const loop = new DecodeLoop(
    observed(model, record),
    {
      maxBatch: batch,
      cacheTokens: 1 << 30,
      prefillChunkTokens: batch * promptIds.length,
      queueDepth: batch,
      streamBufferEvents: steps + 1,
    },
    { onStep: (rows) => stamps.push({ at: performance.now(), rows, index: record.stepMs.length - 1 }) },
  );
  const request = (seed: number): GenerationRequest => ({
    promptIds,
    maxTokens: steps,
    temperature: mode.temperature,
    topP: mode.topP,
    seed: BigInt(seed),
    stop: STOPS,
  });
  await Promise.all(
    Array.from({ length: batch }, async (_, i) => {
      for await (const _event of loop.generate(request(i), new AbortController().signal)) {
        // drained as a server would
      }
    }),
  );
  // Steady state: consecutive steps of the whole batch, after the warm-up.
  const periods: number[] = [];
  const inBatch: number[] = [];
  for (let i = WARM_STEPS + 1; i < stamps.length; i++) {
    const [prev, cur] = [stamps[i - 1]!, stamps[i]!];
    if (prev.rows !== batch || cur.rows !== batch) continue;
    periods.push(cur.at - prev.at);
    inBatch.push(record.stepMs[cur.index]!);
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  // Row 0 is the first to join and a batch's steps feed it first: its tokens are record.tokens
  // from its first step on (the token of the step after its last is never fed; it is sampled).
  return {
    periodMs: mean(periods),
    batchStepMs: mean(inBatch),
    tokens: record.tokens,
    rows: record.rows,
  };
}

// ---- the loop's parts, alone ----------------------------------------------------------------

function measureSampling(rows: Float32Array[], mode: SamplingParams): number {
  const random = new SeededRandom(7n);
  return timeMedian(Math.max(rows.length, 5), (run) => sampleToken(rows[run % rows.length]!, mode, random));
}

/** ms per token of IncrementalDecoder.push, and the pieces it gave (for the stop strings). */
function measureDecoding(model: LanguageModel, promptIds: number[], tokens: number[]) {
  const context = promptIds.slice(-PROMPT_CONTEXT_TOKENS);
  let pieces: string[] = [];
  const perRun = timeMedian(5, () => {
    const decoder = new IncrementalDecoder((ids) => model.decode(ids), context);
    pieces = tokens.map((token) => decoder.push(token));
  });
  return { msPerToken: perRun / tokens.length, pieces };
}

function measureStops(pieces: string[]): number {
  const perRun = timeMedian(20, () => {
    const matcher = new StopMatcher(STOPS);
    for (const piece of pieces) matcher.push(piece);
  });
  return perRun / pieces.length;
}

// ---- the worker over gRPC -------------------------------------------------------------------

/** The worker's ms per step over a run: wall clock and CPU time. */
interface Period {
  wallMs: number;
  cpuMs: number;
}

/**
 * A client of the worker; `once(streamed)` has it serve `batch` greedy generations of `steps`
 * tokens at once, streamed (a gRPC message per piece of text) or unary (one answer, built from the
 * same events inside the worker), and gives its wall and CPU ms per step: its llm_batch_size
 * count, the clock and its CPU time before the calls and after the last answer.
 */
function workerRuns(worker: WorkerProcess, id: string, prompt: string, batch: number) {
  const client = createClient(Llm, worker.address, { deadlineMs: 600_000, clusterSecret: testClusterSecret });
  const pid = worker.child.pid ?? 0;
  const snapshot = async (): Promise<[number, number, number]> => {
    const count = await worker.metric('llm_batch_size_count');
    return [performance.now(), count, cpuMs(pid)];
  };
  const once = async (streamed: boolean): Promise<Period> => {
    const [t0, c0, cpu0] = await snapshot();
    await Promise.all(
      Array.from({ length: batch }, async (_, i) => {
        const metadata = callMetadata({ requestId: `llm-scale-${i}`, keyId: 'bench' });
        const request = { model: id, prompt, max_tokens: steps, temperature: 0, seed: i, stop: STOPS };
        if (!streamed) return unary(client.Complete.bind(client), request, metadata);
        for await (const chunk of client.StreamComplete(request, metadata))
          void (chunk as CompleteChunk__Output);
      }),
    );
    const [t1, c1, cpu1] = await snapshot();
    return { wallMs: (t1 - t0) / (c1 - c0), cpuMs: (cpu1 - cpu0) / (c1 - c0) };
  };
  return { once, close: () => client.close() };
}

// ---- the run --------------------------------------------------------------------------------

const root = await mkdtemp(join(tmpdir(), 'llm-scale-'));
let worker: WorkerProcess | undefined;
try {
  for (const vocab of vocabs) {
    await buildTinyLlama(join(root, 'llm', modelId(vocab)), {
      seed: 0,
      vocabSize: vocab,
      hiddenSize,
      layers: 2,
      logitScale,
      maxPositions: 4096,
    });
  }
  useLocalModels(join(root, 'llm'));
  env.allowRemoteModels = false;
  env.localModelPath = `${join(root, 'llm')}/`;
  if (withGrpc) {
    worker = await startWorker('llm', {
      env: {
        MODEL_DIR: root,
        LLM_DEFAULT_MODEL: modelId(vocabs[0]!),
        LLM_MAX_BATCH: String(Math.max(...batches)),
        LLM_QUEUE_DEPTH: String(2 * Math.max(...batches)),
        LLM_KV_CACHE_TOKENS: String(1 << 20),
        LLM_STREAM_BUFFER_EVENTS: String(steps + 1),
        ORT_INTRA_OP_THREADS: String(ortThreads),
        LOG_LEVEL: 'error',
      },
    });
  }

  const spreads = [];
  const rows = [];
  const cache = [];
  for (const vocab of vocabs) {
    const id = modelId(vocab);
    const model = await loadCausalLm(
      { id, dir: '', description: '' },
      { providers: ['cpu'], deviceId: 0, intraOpThreads: ortThreads },
    );
    const promptIds = model.encode(PROMPT).slice(0, promptTokens);
    // The same prompt for the worker, which adds the BOS itself.
    const promptText = model.decode(promptIds);
    try {
      for (const batch of batches) {
        const pass = await measurePass(id, promptIds, batch);
        if (batch === batches[0]) {
          const { std, entropy } = spread(pass.rows[0]!, [1, 0.7]);
          spreads.push({
            vocab,
            'logits std': ms(std),
            'entropy T=1, nats': ms(entropy[0]!),
            'entropy T=0.7, nats': ms(entropy[1]!),
            'uniform, nats': ms(Math.log(vocab)),
          });
        }
        cache.push({
          vocab,
          batch,
          'step outside ORT ms': ms(pass.stepMs - pass.ortMs),
          'join 1 row ms (its pass + copy)': ms(pass.joinMs),
          'remove 1 row ms': ms(pass.removeMs),
        });
        let grpc: Period | undefined;
        for (const mode of MODES) {
          const loop = await measureLoop(model, promptIds, batch, mode);
          const loopMs = loop.periodMs - loop.batchStepMs;
          const sampleMs = measureSampling(loop.rows.length > 0 ? loop.rows : pass.rows, mode) * batch;
          const decoding = measureDecoding(model, promptIds, loop.tokens);
          const stopMs = measureStops(decoding.pieces) * batch;
          if (mode.temperature === 0 && worker) {
            // Streamed and unary in turns, so both see the machine alike.
            const runs = workerRuns(worker, id, promptText, batch);
            try {
              await runs.once(true); // warm-up: JIT, arenas, the connection
              await runs.once(false);
              const streamed: Period[] = [];
              const whole: Period[] = [];
              for (let i = 0; i < GRPC_RUNS; i++) {
                streamed.push(await runs.once(true));
                whole.push(await runs.once(false));
              }
              const cost = (of: (p: Period) => number) => median(streamed.map(of)) - median(whole.map(of));
              grpc = { wallMs: cost((p) => p.wallMs), cpuMs: cost((p) => p.cpuMs) };
            } finally {
              runs.close();
            }
          }
          rows.push({
            vocab,
            batch,
            sampling: mode.name,
            'pass ms': ms(pass.stepMs),
            'of which ORT': ms(pass.ortMs),
            'loop ms': ms(loopMs),
            'sample ms': ms(sampleMs),
            'decode ms': ms(decoding.msPerToken * batch),
            'stop ms': ms(stopMs),
            'grpc cpu ms': grpc === undefined ? '-' : ms(grpc.cpuMs),
            'grpc wall ms': grpc === undefined ? '-' : ms(grpc.wallMs),
            'loop share': `${((loopMs / (loopMs + pass.stepMs)) * 100).toFixed(0)}%`,
          });
          process.stderr.write(`.`);
        }
      }
    } finally {
      await model.dispose();
    }
  }

  process.stdout.write(
    `\nllm-scale bench: hidden ${hiddenSize}, 2 layers, lm_head × ${logitScale}; prompt ${promptTokens} tokens, ` +
      `${steps} tokens per generation, stops ${JSON.stringify(STOPS)}; CPU, ${ortThreads} ORT thread(s)\n`,
  );
  console.table(spreads);
  console.table(rows);
  console.table(cache);
} finally {
  await worker?.stop();
  await rm(root, { recursive: true, force: true });
}
