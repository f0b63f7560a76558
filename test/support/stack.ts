import { startNats, startRedis, type NatsHandle, type RedisHandle } from '@switchboard/devcluster';
import { startGateway, type GatewayProcess } from './gateway.js';
import { withUsageDatabase } from './usage-database.js';
import {
  startWorker,
  tinyDiffusionRepository,
  tinyLlmRepository,
  tinyWhisperRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from './worker.js';

export interface Stack<G extends GatewayProcess = GatewayProcess> {
  nats: NatsHandle;
  redis: RedisHandle;
  gateways: G[];
  /** The first gateway, for tests that need only one. */
  gateway: G;
  /** The environment its gateways got, to start one more like them (e.g. with spawnGateway). */
  gatewayEnv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Real NATS, real Redis and `count` gateway replicas sharing them, all on free loopback ports.
 * The gateways run in the test process unless `startGateway` says otherwise (spawnGateway).
 */
export async function startStack<G extends GatewayProcess = GatewayProcess>(
  options: {
    gateways?: number;
    env?: Record<string, string>;
    startGateway?: (env: Record<string, string>) => Promise<G>;
  } = {},
): Promise<Stack<G>> {
  const [nats, redis] = await Promise.all([startNats(), startRedis()]);
  // The replicas of a stack share one usage database, as a cluster's gateways do.
  const env = await withUsageDatabase({ ...nats.env('gateway'), ...redis.env('gateway'), ...options.env });
  const start = options.startGateway ?? (startGateway as (env: Record<string, string>) => Promise<G>);
  const started = await Promise.allSettled(Array.from({ length: options.gateways ?? 1 }, () => start(env)));
  const gateways = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    // An in-process gateway left running would keep the test file from ever exiting.
    await Promise.all(gateways.map((g) => g.stop()));
    await Promise.all([nats.stop(), redis.stop()]);
    throw failed.reason;
  }
  return {
    nats,
    redis,
    gateways,
    gatewayEnv: env,
    gateway: gateways[0]!,
    async stop() {
      await Promise.all(gateways.map((g) => g.stop()));
      await Promise.all([nats.stop(), redis.stop()]);
    },
  };
}

export interface ErrorBody {
  error: { code: string; message: string; request_id: string; param?: string };
}

/** Reads a JSON error response and checks the shape every error must have (docs/api.md#errors). */
export async function errorOf(res: Response): Promise<ErrorBody['error']> {
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('application/json'))
    throw new Error(`expected a JSON error, got ${type}: ${await res.text()}`);
  const body = (await res.json()) as ErrorBody;
  const { error } = body;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') {
    throw new Error(`not the error shape: ${JSON.stringify(body)}`);
  }
  if (error.request_id !== res.headers.get('x-request-id')) {
    throw new Error(
      `request_id ${error.request_id} differs from X-Request-Id ${res.headers.get('x-request-id')}`,
    );
  }
  if (/\bat .+:\d+:\d+/.test(error.message)) throw new Error(`stack trace in message: ${error.message}`);
  return error;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` every 50 ms for up to `ms`; fails naming `what`. It sequences a test, so its
 * default deadline is generous: other test files may share the cores.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  for (const started = Date.now(); !(await condition()); await sleep(50)) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting until ${what}`);
  }
}

export interface WorkerWithGateway {
  worker: WorkerProcess;
  /** A gateway of its own, on the stack's NATS and Redis, that routes `name` to this worker. */
  gateway: GatewayProcess;
  stop(): Promise<void>;
}

/**
 * A worker with settings of its own behind a gateway of its own on the stack's NATS and Redis.
 * With `waitServing: false` it is not waited for (give it `<NAME>_LOAD_DELAY_MS` to stay in
 * `loading`), so a test can watch what callers see while its models load.
 */
export async function startWorkerWithGateway(
  name: string,
  stack: Stack,
  env: Record<string, string>,
  options: { waitServing?: boolean } = {},
): Promise<WorkerWithGateway> {
  const worker = await startWorker(name, { env, waitServing: options.waitServing });
  try {
    const gateway = await startGateway({
      ...stack.nats.env('gateway'),
      ...stack.redis.env('gateway'),
      [`${name.toUpperCase()}_ADDR`]: worker.address,
    });
    return {
      worker,
      gateway,
      async stop() {
        await gateway.stop();
        await worker.stop();
      },
    };
  } catch (error) {
    await worker.stop();
    throw error;
  }
}

/** A model worker process behind a stack of its own, and the model repository it reads. */
export interface ModelStack {
  repo: TinyModelRepository;
  worker: WorkerProcess;
  stack: Stack;
  stop(): Promise<void>;
}

export interface ModelStackOptions {
  /** The worker's models (default: the capability's tiny development model). */
  repository?: () => Promise<TinyModelRepository>;
  workerEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  /** Given to both, e.g. the object store's settings, which worker and gateway must share. */
  sharedEnv?: Record<string, string>;
}

const tinyRepositories: Record<string, () => Promise<TinyModelRepository>> = {
  llm: tinyLlmRepository,
  whisper: tinyWhisperRepository,
  diffusion: tinyDiffusionRepository,
};

/**
 * A real worker process (`llm`, `whisper` or `diffusion`) on its tiny development model, or on
 * the models `repository` makes (e.g. a sharedModelRepository), with one ONNX Runtime thread so
 * tests share the cores fairly, behind a stack of its own whose gateway routes to it.
 */
export async function startModelStack(name: string, options: ModelStackOptions = {}): Promise<ModelStack> {
  const repo = await (options.repository ?? tinyRepositories[name]!)();
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorker(name, {
      env: {
        MODEL_DIR: repo.modelDir,
        ORT_INTRA_OP_THREADS: '1',
        ...options.sharedEnv,
        ...options.workerEnv,
      },
    });
    const started = worker;
    const stack = await startStack({
      env: { [`${name.toUpperCase()}_ADDR`]: started.address, ...options.sharedEnv, ...options.gatewayEnv },
    });
    return {
      repo,
      worker: started,
      stack,
      async stop() {
        await stack.stop();
        await started.stop();
        await repo.remove();
      },
    };
  } catch (error) {
    await worker?.stop();
    await repo.remove();
    throw error;
  }
}

/** The llm worker on the tiny development Llama (or `repository`'s models) behind its own stack. */
export const startLlmStack = (options: Omit<ModelStackOptions, 'sharedEnv'> = {}): Promise<ModelStack> =>
  startModelStack('llm', options);
