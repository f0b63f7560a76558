// Creates (or finds) the stream, the per-back-end consumers and the buckets. Every process that
// opens the job system runs it, so whichever starts first — a gateway, with no worker yet, or a
// worker — leaves NATS ready, and KEDA can see pending messages on consumers that exist.
import { retryCreationRace } from '@switchboard/events';
import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  nanos,
  type JetStreamManager,
  type KV,
  type NatsConnection,
} from 'nats';
import { backendNames, type JobNames } from './names.js';

export interface JobBuckets {
  readonly jobs: KV;
  readonly idempotency: KV;
  readonly active: KV;
  readonly backends: KV;
}

export interface SetupOptions {
  /** How long a worker may hold a job without a heartbeat before it is redelivered. */
  readonly ackWaitMs: number;
  /** How long finished job records are kept (KV max age). */
  readonly jobRetentionMs: number;
  /**
   * Whether an existing consumer is brought to these settings. Workers do (their ack wait is the
   * one that matters); gateways only create missing consumers, so the two never flap.
   */
  readonly updateConsumers?: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const STREAM_EXISTS = 10058;
const CONSUMER_EXISTS = 10148;

const apiCode = (error: unknown): number | undefined =>
  (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;

async function ensureStream(jsm: JetStreamManager, names: JobNames): Promise<void> {
  const config = {
    name: names.stream,
    subjects: [`${names.subjectPrefix}.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // Publishing a job twice under its id (a retried submission) stores it once.
    duplicate_window: nanos(2 * 60 * 1000),
    // Direct gets let metrics read the oldest waiting job without a consumer.
    allow_direct: true,
  };
  try {
    await jsm.streams.add(config);
  } catch (error) {
    if (apiCode(error) !== STREAM_EXISTS) throw error;
  }
}

async function ensureConsumers(
  jsm: JetStreamManager,
  names: JobNames,
  ackWaitMs: number,
  update: boolean,
): Promise<void> {
  for (const backend of backendNames) {
    const config = {
      durable_name: names.consumer(backend),
      filter_subject: names.subject(backend),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitMs),
      // Attempts are counted in the job record (attempts_exhausted is a job state, not a lost
      // message), so the server never gives up on a message by itself.
      max_deliver: -1,
      max_ack_pending: 1000,
    };
    const existing = await jsm.consumers.info(names.stream, config.durable_name).catch(() => null);
    if (existing === null) {
      try {
        await jsm.consumers.add(names.stream, config);
      } catch (error) {
        if (apiCode(error) !== CONSUMER_EXISTS) throw error; // another process created it meanwhile
      }
    } else if (update && existing.config.ack_wait !== config.ack_wait) {
      await jsm.consumers.update(names.stream, config.durable_name, { ack_wait: config.ack_wait });
    }
  }
}

export async function setUpJobSystem(
  nc: NatsConnection,
  names: JobNames,
  options: SetupOptions,
): Promise<JobBuckets> {
  // Gateway replicas and workers starting together create the same stream and buckets.
  return retryCreationRace(() => setUp(nc, names, options));
}

async function setUp(nc: NatsConnection, names: JobNames, options: SetupOptions): Promise<JobBuckets> {
  const jsm = await nc.jetstreamManager();
  await ensureStream(jsm, names);
  await ensureConsumers(jsm, names, options.ackWaitMs, options.updateConsumers ?? false);
  const js = nc.jetstream();
  // history 1: only the current value matters; revisions still order writes (compare-and-set).
  const [jobs, idempotency, active, backends] = await Promise.all([
    js.views.kv(names.jobsBucket, { history: 1, storage: StorageType.File, ttl: options.jobRetentionMs }),
    js.views.kv(names.idempotencyBucket, { history: 1, storage: StorageType.File, ttl: DAY_MS }),
    js.views.kv(names.activeBucket, { history: 1, storage: StorageType.File }),
    js.views.kv(names.backendsBucket, { history: 1, storage: StorageType.File }),
  ]);
  return { jobs, idempotency, active, backends };
}
