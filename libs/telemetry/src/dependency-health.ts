// Whether the brokers and stores a process depends on answer, as metrics an alert can watch: a
// process whose NATS or Redis is unreachable often still looks alive (it reconnects quietly).
import { Gauge, Histogram, type Registry } from 'prom-client';

/** One dependency to check: resolves when it answered, rejects (or never settles) when not. */
export interface DependencyProbe {
  /** The `dependency` label: nats, redis, s3. */
  readonly dependency: string;
  readonly check: () => Promise<unknown>;
}

export interface DependencyProbeOptions {
  /** Between rounds of checks (default 10 s). */
  readonly intervalMs?: number;
  /** A check still pending after this long counts as down (default 5 s). */
  readonly timeoutMs?: number;
}

export interface DependencyProbes {
  /** Runs one round now (every probe, at once); settles when each has answered or timed out. */
  checkNow(): Promise<void>;
  /** Stops the timer and ends a round under way (recording nothing more). */
  close(): void;
}

const DEFAULT_INTERVAL_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Registers `switchboard_dependency_up{dependency}` and `switchboard_dependency_check_seconds`
 * on `registry` and checks every probe at once, then every `intervalMs`. A check never throws into
 * the process and never holds it open: a failure or a timeout is a 0, the interval timer is unref'd
 * and close() ends a pending check at once.
 * Rounds never overlap, so a dependency that hangs costs at most one pending check at a time.
 */
export function startDependencyProbes(
  registry: Registry,
  probes: readonly DependencyProbe[],
  options: DependencyProbeOptions = {},
): DependencyProbes {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const up = dependencyUpGauge(registry);
  const seconds = dependencyCheckHistogram(registry);
  // Until the first answer a dependency is counted down: a series exists from the first scrape.
  for (const { dependency } of probes) up.set({ dependency }, 0);

  // Pending timeouts, so close() can end a round at once instead of holding the process open.
  const pending = new Set<() => void>();
  const checkOne = async ({ dependency, check }: DependencyProbe): Promise<void> => {
    const started = process.hrtime.bigint();
    const answered = await withinTimeout(check, timeoutMs, pending);
    if (closed) return;
    seconds.observe({ dependency }, Number(process.hrtime.bigint() - started) / 1e9);
    up.set({ dependency }, answered ? 1 : 0);
  };
  let closed = false;
  let round: Promise<void> | undefined;
  const checkNow = (): Promise<void> =>
    (round ??= Promise.all(probes.map(checkOne)).then(
      () => {
        round = undefined;
      },
      () => {
        round = undefined;
      },
    ));

  void checkNow();
  const timer = setInterval(() => void checkNow(), options.intervalMs ?? DEFAULT_INTERVAL_MS);
  timer.unref();
  return {
    checkNow,
    close: () => {
      closed = true;
      clearInterval(timer);
      for (const expire of pending) expire();
    },
  };
}

/**
 * True when `check` resolved within `timeoutMs`; false when it rejected, threw, took longer, or
 * the probes were closed meanwhile (each pending timeout is in `pending` until it settles).
 */
async function withinTimeout(
  check: () => Promise<unknown>,
  timeoutMs: number,
  pending: Set<() => void>,
): Promise<boolean> {
  let expire!: () => void;
  const expired = new Promise<boolean>((resolve) => (expire = () => resolve(false)));
  const timer = setTimeout(expire, timeoutMs);
  pending.add(expire);
  const answered = (async () => {
    await check();
    return true;
  })().catch(() => false);
  try {
    return await Promise.race([answered, expired]);
  } finally {
    clearTimeout(timer);
    pending.delete(expire);
  }
}

/** Shared by several probe sets on one registry (prom-client refuses a second registration). */
function dependencyUpGauge(registry: Registry): Gauge<'dependency'> {
  const existing = registry.getSingleMetric('switchboard_dependency_up');
  if (existing) return existing as Gauge<'dependency'>;
  return new Gauge({
    name: 'switchboard_dependency_up',
    help: '1 while the dependency (nats, redis, s3) answered its last check in time, else 0.',
    labelNames: ['dependency'],
    registers: [registry],
  });
}

function dependencyCheckHistogram(registry: Registry): Histogram<'dependency'> {
  const existing = registry.getSingleMetric('switchboard_dependency_check_seconds');
  if (existing) return existing as Histogram<'dependency'>;
  return new Histogram({
    name: 'switchboard_dependency_check_seconds',
    help: 'How long one reachability check of the dependency took (a timed-out one counts its timeout).',
    labelNames: ['dependency'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
}

/** A NATS connection answers a PING round trip (flush); a closed one is down without asking. */
export function natsProbe(nats: { isClosed(): boolean; flush(): Promise<void> }): DependencyProbe {
  return {
    dependency: 'nats',
    check: async () => {
      if (nats.isClosed()) throw new Error('connection closed');
      await nats.flush();
    },
  };
}

/** The part of an ioredis client the probe uses. */
export interface ProbedRedis {
  /** ioredis's connection state: `wait`/`connecting`/`connect` while its first connection is made. */
  readonly status?: string;
  ping(): Promise<unknown>;
  once?(event: 'ready' | 'error', listener: () => void): unknown;
}

/**
 * A Redis client answers PING. A client still making its connection is waited for (within the
 * probe's timeout): with its offline queue off, a PING sent then fails at once, and every process
 * start would report Redis down for one probe interval.
 */
export function redisProbe(redis: ProbedRedis): DependencyProbe {
  return {
    dependency: 'redis',
    check: async () => {
      if (redis.once && ['wait', 'connecting', 'connect'].includes(redis.status ?? '')) {
        await new Promise<void>((resolve) => {
          redis.once!('ready', resolve);
          redis.once!('error', resolve);
        });
      }
      return redis.ping();
    },
  };
}

/** Key probed in the object store: a HEAD that needs no such object (a miss is an answer too). */
export const OBJECT_STORE_PROBE_KEY = 'health/probe';

/** The object store answers a HEAD of a key (whether the object exists does not matter). */
export function objectStoreProbe(objects: { stat(key: string): Promise<unknown> }): DependencyProbe {
  return { dependency: 's3', check: () => objects.stat(OBJECT_STORE_PROBE_KEY) };
}
