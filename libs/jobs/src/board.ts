// The gateway's side of the job system: submit, read, list and cancel jobs straight in JetStream
// and KV. No animation worker is involved, so all of it works while workers are scaled to zero.
import type { JetStreamClient, JetStreamManager, KV, NatsConnection } from 'nats';
import { SwitchboardError, dependencyUnavailable } from '@switchboard/errors';
import { sendTraced, type EventPublisher } from '@switchboard/events';
import { readBackendCatalogue, type BackendDescription } from './catalogue.js';
import { publishJobEvent } from './events.js';
import { IdempotencyClaims } from './idempotency.js';
import { JobRecords, type JobPage, type ListOptions } from './records.js';
import { isFinished, type JobInputs, type JobMessage, type JobParams, type JobRecord } from './record.js';
import { setUpJobSystem, type SetupOptions } from './setup.js';
import { ActiveJobSlots } from './slots.js';
import { jobNames, type BackendName, type JobNames } from './names.js';

export interface JobBoardOptions extends SetupOptions {
  readonly names?: JobNames;
  readonly events?: EventPublisher;
}

export interface Submission {
  readonly jobId: string;
  readonly ownerKeyId: string;
  readonly backend: BackendName;
  readonly params: JobParams;
  readonly inputs: JobInputs;
  /** The tier's limit on queued + running jobs. */
  readonly activeLimit: number;
  readonly idempotency?: { readonly key: string; readonly bodyHash: string } | undefined;
}

export type SubmitOutcome =
  | { readonly kind: 'created'; readonly job: JobRecord }
  /** The same Idempotency-Key and body as an earlier request: its job. */
  | { readonly kind: 'duplicate'; readonly job: JobRecord };

const jobNotFound = () => new SwitchboardError('job_not_found');

/**
 * NATS failing (restarting, partitioned, JetStream not yet back) is a 503 the caller may retry,
 * never a 500: the jobs themselves are safe in the stream's file storage.
 */
function reaching<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    if (error instanceof SwitchboardError) throw error;
    throw dependencyUnavailable('The job store is unreachable; retry shortly.', error);
  });
}
const WAIT_FOR_DUPLICATE_MS = 10_000;

export class JobBoard {
  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: JobNames,
    readonly records: JobRecords,
    private readonly claims: IdempotencyClaims,
    private readonly slots: ActiveJobSlots,
    private readonly backends: KV,
    private readonly events: EventPublisher | undefined,
  ) {}

  static async open(nc: NatsConnection, options: JobBoardOptions): Promise<JobBoard> {
    const names = options.names ?? jobNames();
    const buckets = await setUpJobSystem(nc, names, options);
    return new JobBoard(
      nc.jetstream(),
      await nc.jetstreamManager(),
      names,
      new JobRecords(buckets.jobs),
      new IdempotencyClaims(buckets.idempotency),
      new ActiveJobSlots(buckets.active),
      buckets.backends,
      options.events,
    );
  }

  /** What the workers last said about each back-end (empty while none has ever started). */
  async catalogue(): Promise<Map<BackendName, BackendDescription>> {
    return reaching(readBackendCatalogue(this.backends));
  }

  /**
   * Queues a job: idempotency claim, then a place within the tier's limit, then the record, then
   * the queue message. A failure after the claim gives the claim and the place back.
   */
  submit(submission: Submission): Promise<SubmitOutcome> {
    return reaching(this.queue(submission));
  }

  private async queue(submission: Submission): Promise<SubmitOutcome> {
    const { ownerKeyId, jobId, idempotency } = submission;
    if (idempotency) {
      const outcome = await this.claims.claim(
        ownerKeyId,
        idempotency.key,
        idempotency.bodyHash,
        jobId,
        async (id) => (await this.records.get(ownerKeyId, id)) !== null,
      );
      if (outcome.kind === 'conflict') throw new SwitchboardError('idempotency_key_reused');
      if (outcome.kind === 'duplicate') {
        return { kind: 'duplicate', job: await this.awaitRecord(ownerKeyId, outcome.jobId) };
      }
    }
    let reserved = false;
    try {
      reserved = await this.slots.reserve(ownerKeyId, jobId, submission.activeLimit, async (id) => {
        const record = await this.records.get(ownerKeyId, id);
        return record !== null && !isFinished(record.status);
      });
      if (!reserved) {
        throw new SwitchboardError('job_limit', {
          message: `This key already has ${submission.activeLimit} queued or running animation jobs, as many as its tier allows.`,
        });
      }
      const now = new Date().toISOString();
      const record: JobRecord = {
        job_id: jobId,
        owner_key_id: ownerKeyId,
        backend: submission.backend,
        status: 'queued',
        progress: 0,
        attempts: 0,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
        params: submission.params,
        inputs: submission.inputs,
        result: null,
        error: null,
        last_error: null,
        queue_seq: null,
      };
      await this.records.create(record);
      const message: JobMessage = { job_id: jobId, owner_key_id: ownerKeyId };
      // The job's trace goes with it through the queue: the worker's attempts are its children.
      const ack = await sendTraced(
        'animation',
        'animation.submit',
        { 'job.id': jobId, 'job.backend': submission.backend },
        (headers) =>
          this.js.publish(this.names.subject(submission.backend), JSON.stringify(message), {
            msgID: jobId,
            headers,
          }),
      );
      const { record: queued } = await this.records.update(ownerKeyId, jobId, (current) => ({
        ...current,
        queue_seq: ack.seq,
      }));
      publishJobEvent(this.events, record);
      return { kind: 'created', job: queued ?? record };
    } catch (error) {
      if (reserved) await this.slots.release(ownerKeyId, jobId).catch(() => undefined);
      if (idempotency) await this.claims.release(ownerKeyId, idempotency.key, jobId).catch(() => undefined);
      throw error;
    }
  }

  /** A duplicate's job, once its first request has written it (that request may still be in flight). */
  private async awaitRecord(ownerKeyId: string, jobId: string): Promise<JobRecord> {
    const deadline = Date.now() + WAIT_FOR_DUPLICATE_MS;
    for (;;) {
      const record = await this.records.get(ownerKeyId, jobId);
      if (record) return record;
      if (Date.now() > deadline) {
        throw new SwitchboardError('unavailable', {
          message: 'An earlier request with this Idempotency-Key is still being accepted; retry shortly.',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async get(ownerKeyId: string, jobId: string): Promise<JobRecord> {
    const record = await reaching(this.records.get(ownerKeyId, jobId));
    if (!record) throw jobNotFound();
    return record;
  }

  list(ownerKeyId: string | null, options: ListOptions): Promise<JobPage> {
    return reaching(this.records.list(ownerKeyId, options));
  }

  /**
   * Cancels a queued or running job at once in its record (a running job's worker watches the
   * record and stops within its next step); a finished job → 409 job_finished. `ownerKeyId` null:
   * the admin, for any owner.
   */
  cancel(ownerKeyId: string | null, jobId: string): Promise<JobRecord> {
    return reaching(this.cancelJob(ownerKeyId, jobId));
  }

  private async cancelJob(ownerKeyId: string | null, jobId: string): Promise<JobRecord> {
    const owner = ownerKeyId ?? (await this.records.findOwner(jobId));
    if (owner === null) throw jobNotFound();
    let finishedAlready = false;
    const { record, changed } = await this.records.update(owner, jobId, (current) => {
      finishedAlready = isFinished(current.status);
      if (finishedAlready) return undefined;
      const now = new Date().toISOString();
      return { ...current, status: 'canceled', updated_at: now, finished_at: now };
    });
    if (!record) throw jobNotFound();
    if (finishedAlready && !changed) {
      throw new SwitchboardError('job_finished', { message: `The job has already ${record.status}.` });
    }
    await this.slots.release(owner, jobId);
    publishJobEvent(this.events, record);
    // A queued job's message is dropped so the queue (and the autoscaler) stop counting it; if a
    // worker took it meanwhile, the worker sees the canceled record and lets it go.
    if (record.queue_seq !== null) {
      await this.jsm.streams.deleteMessage(this.names.stream, record.queue_seq, false).catch(() => undefined);
    }
    return record;
  }
}
