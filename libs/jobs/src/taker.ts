// The worker's side of the job system: take the next job of a back-end from its durable pull
// consumer, turn the delivery into a JobAttempt (or settle it at once: canceled meanwhile,
// finished by another attempt, out of attempts), and describe the worker's back-ends.
import type { Consumer, JetStreamManager, JsMsg, KV, NatsConnection, StoredMsg } from 'nats';
import type { EventPublisher } from '@switchboard/events';
import { JobAttempt, exhausted, type AttemptDeps } from './attempt.js';
import { publishBackendDescription, readBackendCatalogue, type BackendDescription } from './catalogue.js';
import { publishJobEvent } from './events.js';
import { JobRecords } from './records.js';
import { isFinished, type JobMessage } from './record.js';
import { setUpJobSystem, type SetupOptions } from './setup.js';
import { ActiveJobSlots } from './slots.js';
import { jobNames, type BackendName, type JobNames } from './names.js';

export interface JobTakerOptions extends SetupOptions {
  readonly names?: JobNames;
  readonly events?: EventPublisher;
  readonly maxAttempts: number;
  readonly retryDelayMs?: (attempt: number) => number;
  readonly logger?: { warn(obj: object, msg: string): void };
}

const parseMessage = (msg: JsMsg): JobMessage | null => {
  try {
    const value = JSON.parse(new TextDecoder().decode(msg.data)) as Partial<JobMessage>;
    return typeof value.job_id === 'string' && typeof value.owner_key_id === 'string'
      ? { job_id: value.job_id, owner_key_id: value.owner_key_id }
      : null;
  } catch {
    return null;
  }
};

/** 1 s, 4 s, 16 s … capped at a minute: a failing dependency gets time to come back. */
const defaultRetryDelay = (attempt: number) => Math.min(60_000, 1000 * 4 ** Math.max(0, attempt - 1));

export class JobTaker {
  private readonly consumers = new Map<BackendName, Consumer>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly names: JobNames,
    private readonly jobsKv: KV,
    private readonly backendsKv: KV,
    private readonly deps: AttemptDeps,
    private readonly logger: JobTakerOptions['logger'],
  ) {}

  static async open(nc: NatsConnection, options: JobTakerOptions): Promise<JobTaker> {
    const names = options.names ?? jobNames();
    const buckets = await setUpJobSystem(nc, names, { ...options, updateConsumers: true });
    const records = new JobRecords(buckets.jobs);
    return new JobTaker(
      nc,
      await nc.jetstreamManager(),
      names,
      buckets.jobs,
      buckets.backends,
      {
        records,
        slots: new ActiveJobSlots(buckets.active),
        events: options.events,
        ackWaitMs: options.ackWaitMs,
        maxAttempts: options.maxAttempts,
        retryDelayMs: options.retryDelayMs ?? defaultRetryDelay,
      },
      options.logger,
    );
  }

  get records(): JobRecords {
    return this.deps.records;
  }

  /**
   * Publishes what this worker's back-end is. A worker that cannot run it (avatar without vendor
   * settings) does not overwrite another worker's word that it can: in a mixed fleet the
   * back-end is available as long as some worker serves it.
   */
  async describe(description: BackendDescription): Promise<void> {
    if (!description.configured) {
      const current = (await readBackendCatalogue(this.backendsKv)).get(description.backend);
      if (current?.configured) return;
    }
    await publishBackendDescription(this.backendsKv, description);
  }

  /**
   * The next message of a back-end, or null when none came within `expiresMs`. One pull of one
   * message, made only when the worker has a free slot: a busy worker never holds a job that
   * another worker could start (a pre-fetched message's ack wait would run out unheard).
   */
  async next(backend: BackendName, expiresMs: number): Promise<JsMsg | null> {
    let consumer = this.consumers.get(backend);
    if (!consumer) {
      consumer = await this.nc.jetstream().consumers.get(this.names.stream, this.names.consumer(backend));
      this.consumers.set(backend, consumer);
    }
    return consumer.next({ expires: expiresMs });
  }

  /** Jobs waiting for the back-end and the age of the oldest (seconds; 0 when none waits). */
  async queueStats(backend: BackendName): Promise<{ depth: number; oldestAgeSeconds: number }> {
    const { jsm } = this;
    const info = await jsm.consumers.info(this.names.stream, this.names.consumer(backend));
    if (info.num_pending === 0) return { depth: 0, oldestAgeSeconds: 0 };
    // The first message with the subject after the consumer's ack floor is the oldest not taken.
    // nats.js 2.x has `direct` on its manager but not on the interface it returns.
    const { direct } = jsm as unknown as {
      direct: {
        getMessage(stream: string, query: { seq: number; next_by_subj: string }): Promise<StoredMsg>;
      };
    };
    const oldest = await direct
      .getMessage(this.names.stream, {
        seq: info.delivered.stream_seq + 1,
        next_by_subj: this.names.subject(backend),
      })
      .catch(() => null);
    const age = oldest ? (Date.now() - oldest.time.getTime()) / 1000 : 0;
    return { depth: info.num_pending, oldestAgeSeconds: Math.max(0, age) };
  }

  /**
   * Starts an attempt for a delivered message, or settles the message and returns null when
   * there is nothing to run.
   */
  async start(msg: JsMsg): Promise<JobAttempt | null> {
    const message = parseMessage(msg);
    if (!message) {
      this.logger?.warn({ subject: msg.subject }, 'malformed job message dropped');
      msg.term();
      return null;
    }
    const { records, maxAttempts } = this.deps;
    let outcome = 'skip' as 'run' | 'skip' | 'exhausted';
    const { record, changed } = await records.update(message.owner_key_id, message.job_id, (current) => {
      if (isFinished(current.status)) {
        outcome = 'skip';
        return undefined;
      }
      const now = new Date().toISOString();
      if (current.attempts >= maxAttempts) {
        outcome = 'exhausted';
        // The last attempt's worker died without a word (its message came back after the ack wait).
        const lastError =
          current.last_error ?? `the worker running attempt ${current.attempts} stopped without finishing it`;
        return {
          ...current,
          status: 'failed',
          error: exhausted(current.attempts, lastError),
          updated_at: now,
          finished_at: now,
        };
      }
      outcome = 'run';
      const died = current.status === 'running';
      return {
        ...current,
        status: 'running',
        progress: 0,
        attempts: current.attempts + 1,
        last_error: died
          ? `the worker running attempt ${current.attempts} stopped without finishing it`
          : current.last_error,
        started_at: current.started_at ?? now,
        updated_at: now,
      };
    });
    if (!record || outcome === 'skip' || !changed) {
      msg.ack(); // a job that no longer exists or is finished needs no more work
      return null;
    }
    publishJobEvent(this.deps.events, record);
    if (outcome === 'exhausted') {
      await this.deps.slots.release(record.owner_key_id, record.job_id).catch(() => undefined);
      msg.ack();
      return null;
    }
    const attempt = new JobAttempt(record, msg, this.deps);
    await attempt.watchForCancel(this.jobsKv);
    return attempt;
  }
}
