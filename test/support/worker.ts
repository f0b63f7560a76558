import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@switchboard/devcluster';
import { waitForServing } from '@switchboard/grpc';
import { buildTinyDiffusion, buildTinyLlama, buildTinyWhisper } from '@switchboard/models-dev';
import { repoRoot, testClusterSecret } from './gateway.js';
import { retryOnPortClash } from './port-clash.js';
import { spawnNode } from './processes.js';
import { requirePublishedModels } from './shared-models.js';

export interface WorkerProcess {
  /** host:port for the gateway's `<NAME>_ADDR`. */
  address: string;
  metricsUrl: string;
  child: ChildProcess;
  output(): string;
  /** A metric's value from GET /metrics (summed over label sets matching `labels`). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** SIGTERM, then SIGKILL after `graceMs` (5 s by default). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Polls a worker's metric until it reaches `atLeast` (every 10 ms, for 20 s at most: generous,
 * since other test files may share the cores).
 */
export async function untilMetricAtLeast(
  worker: WorkerProcess,
  name: string,
  atLeast: number,
): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    if ((await worker.metric(name)) >= atLeast) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${name} never reached ${atLeast}`);
}

export interface StartWorkerOptions {
  env?: Record<string, string>;
  /** Wait for grpc health SERVING (default) or only for the port to answer. */
  waitServing?: boolean;
  /** The gRPC listen address (default 127.0.0.1), e.g. a loopback address of its own per replica. */
  host?: string;
  /** The gRPC port (default a free one), e.g. the port its fellow replicas share. */
  port?: number;
  /**
   * Variables naming more ports it binds (`DEVTOOLS_PORT`): each gets a free port on every start,
   * so a port taken meanwhile by another process is not tried again. A port `env` gives is kept.
   */
  freshPorts?: readonly string[];
}

/**
 * Starts a worker (`services/<name>/dist/main.js`) as its own process on free ports, as the local
 * cluster runs it, and waits for grpc.health.v1 SERVING (its models are loaded).
 */
export function startWorker(name: string, options: StartWorkerOptions = {}): Promise<WorkerProcess> {
  return retryOnPortClash(() => startWorkerOnce(name, options));
}

async function startWorkerOnce(name: string, options: StartWorkerOptions): Promise<WorkerProcess> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const metricsPort = await freePort();
  const freshPorts: Record<string, string> = {};
  for (const variable of options.freshPorts ?? []) freshPorts[variable] = String(await freePort());
  const proc = spawnNode(`${name} worker`, join(repoRoot, `services/${name}/dist/main.js`), {
    env: {
      PATH: process.env.PATH ?? '',
      GRPC_PORT: String(port),
      GRPC_HOST: host,
      METRICS_PORT: String(metricsPort),
      CLUSTER_SECRET: testClusterSecret,
      LOG_LEVEL: 'warn',
      ...freshPorts,
      ...options.env,
    },
  });
  const { child, output } = proc;
  const address = `${host}:${port}`;
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const stop = (graceMs = 5000) => proc.stop(graceMs);
  const exited = proc.exited.then(() => {
    throw new Error(`${name} worker exited during start-up:\n${output()}`);
  });
  // Generous: model loading is CPU-bound, and other test files may share the cores.
  const started =
    options.waitServing === false
      ? waitForMetrics(metricsUrl)
      : waitForServing(address, { timeoutMs: 60_000 });
  // Whichever loses the race must not surface later as an unhandled rejection.
  started.catch(() => undefined);
  exited.catch(() => undefined);
  const status = await Promise.race([started, exited]).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  if (options.waitServing !== false && status !== 'SERVING') {
    await stop();
    throw new Error(`${name} worker not SERVING (${String(status)}):\n${output()}`);
  }
  return {
    address,
    metricsUrl,
    child,
    output,
    metric: async (metric, labels = {}) => {
      const text = await (await fetch(metricsUrl)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
        if (!match || match[1] !== metric) continue;
        const set = match[2] ?? '';
        if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(match[3]);
      }
      return sum;
    },
    stop,
  };
}

async function waitForMetrics(url: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return 'UP';
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no metrics at ${url}`);
}

export interface TinyModelRepository {
  modelDir: string;
  modelId: string;
  remove(): Promise<void>;
}

/**
 * A temporary MODEL_DIR holding a copy of a folder of the published model files beside the
 * checkout (found by test/support/shared-models.ts; e.g. `llm/stories260K`) as
 * <capability>/<modelId>; `prepare` may then add or change files in the copy (tiny ONNX weights
 * under a published layout's names, a models.json). Throws, naming the folder, when the published
 * files are absent: a test that calls it skips first with `needsPublishedModels(…)`.
 */
export async function sharedModelRepository(
  sharedPath: string,
  options: { capability?: string; modelId?: string; prepare?: (dir: string) => Promise<unknown> } = {},
): Promise<TinyModelRepository> {
  const source = requirePublishedModels(...sharedPath.split('/'));
  const [capability, name] = sharedPath.split('/') as [string, string];
  const modelId = options.modelId ?? name;
  return tinyRepository(options.capability ?? capability, modelId, async (dir) => {
    // A copy, not a link: the repository scan counts only real folders.
    await cp(source, dir, { recursive: true });
    await options.prepare?.(dir);
  });
}

/** A temporary MODEL_DIR holding one model, built by `build`, as <capability>/<modelId>. */
async function tinyRepository(
  capability: string,
  modelId: string,
  build: (dir: string) => Promise<unknown>,
): Promise<TinyModelRepository> {
  const modelDir = await mkdtemp(join(tmpdir(), 'switchboard-models-'));
  await build(join(modelDir, capability, modelId));
  return { modelDir, modelId, remove: () => rm(modelDir, { recursive: true, force: true }) };
}

/** A temporary MODEL_DIR holding the tiny random-weight Llama as llm/<modelId>. */
export const tinyLlmRepository = (modelId = 'tiny-llama-dev', seed = 0) =>
  tinyRepository('llm', modelId, (dir) => buildTinyLlama(dir, { seed }));

/** A temporary MODEL_DIR holding the tiny random-weight Whisper as whisper/<modelId>. */
export const tinyWhisperRepository = (modelId = 'tiny-whisper-dev', seed = 0) =>
  tinyRepository('whisper', modelId, (dir) => buildTinyWhisper(dir, { seed }));

/** A temporary MODEL_DIR holding the tiny random-weight diffusion pipeline as diffusion/<modelId>. */
export const tinyDiffusionRepository = (modelId = 'tiny-sd-dev', seed = 0) =>
  tinyRepository('diffusion', modelId, (dir) => buildTinyDiffusion(dir, { seed }));
