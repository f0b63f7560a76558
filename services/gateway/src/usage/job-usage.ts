import type { KvEntry } from 'nats';
import { decodeRecord, type JobBoard, type JobRecord } from '@switchboard/jobs';
import { watchBucket, type BucketWatch } from '@switchboard/keys';
import type { Logger } from '@switchboard/telemetry';
import type { MeterValues } from '@switchboard/usage';
import type { Metering } from './metering.js';

/** The record and reservation id of a job's usage: the same on every replica and every attempt. */
export const jobRecordId = (jobId: string) => `job:${jobId}`;

/**
 * What a job submission reserves: its frames and seconds when the request fixes them (fps and
 * duration given), else nothing is known up front and the quota is only checked.
 */
export function jobReservation(params: { fps?: number | undefined; duration_s?: number | undefined }): {
  reserve: MeterValues;
  check: ('video_frames' | 'video_seconds')[];
} {
  if (params.fps === undefined || params.duration_s === undefined) {
    return { reserve: {}, check: ['video_frames', 'video_seconds'] };
  }
  return {
    reserve: { video_frames: Math.ceil(params.fps * params.duration_s), video_seconds: params.duration_s },
    check: [],
  };
}

/** A queued job may wait long; its reservation is settled or released by the watch well before this. */
export const JOB_RESERVATION_MS = 24 * 60 * 60 * 1000;

/**
 * Records animation usage from the jobs bucket: a succeeded job's frames and seconds (per back-end
 * as the model), settling its submission's reservation; a failed or canceled one releases it.
 * Every replica watches and records; the store keeps the first record of a job id, so N replicas,
 * a redelivered job and a replica replaying the bucket after a restart all count once.
 */
export class JobUsage {
  private watch: BucketWatch | undefined;
  private readonly done = new Set<string>();
  /** One write at a time: a restart replays every job in the bucket, which must not flood the store. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly metering: Metering,
    private readonly logger: Logger,
  ) {}

  async start(board: JobBoard): Promise<void> {
    this.watch = await watchBucket(
      board.records.kv,
      (entry) => this.onEntry(entry),
      this.logger,
      'jobs usage',
    );
  }

  close(): void {
    this.watch?.stop();
  }

  private onEntry(entry: KvEntry): void {
    if (entry.operation !== 'PUT') return;
    let job: JobRecord;
    try {
      job = decodeRecord(entry.value);
    } catch (error) {
      // A record another version wrote: its usage cannot be read, and the watch must go on.
      this.logger.error({ err: error, key: entry.key }, 'job record not readable for usage');
      return;
    }
    if (this.done.has(job.job_id)) return;
    if (job.status === 'succeeded' && job.result) {
      this.settle(job, () => this.record(job));
    } else if (job.status === 'failed' || job.status === 'canceled') {
      this.settle(job, () => this.metering.release(jobRecordId(job.job_id)));
    }
  }

  private settle(job: JobRecord, work: () => Promise<void>): void {
    this.done.add(job.job_id);
    if (this.done.size > 100_000) this.done.delete(this.done.values().next().value!);
    this.queue = this.queue
      .then(work)
      .catch((error: unknown) =>
        this.logger.error({ err: error, job_id: job.job_id }, 'job usage not recorded'),
      );
  }

  private record(job: JobRecord): Promise<void> {
    const id = jobRecordId(job.job_id);
    return this.metering.recordForKeyId(
      {
        id,
        key_id: job.owner_key_id,
        capability: 'animation',
        model: job.backend,
        at: new Date(job.finished_at ?? job.updated_at),
        values: { video_frames: job.result!.frames, video_seconds: job.result!.duration_s },
      },
      id,
    );
  }
}
