// The worker's job loop: for each back-end it serves, `concurrency` slots each pull one job at a
// time, run it (inputs in, back-end renders, MP4 out, stored under the job id) and settle it.
// Results are written under the job id, so a redelivered job overwrites rather than duplicates,
// and only the compare-and-set in attempt.succeed() makes a job succeeded — exactly once.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { JsMsg } from 'nats';
import { traceContextOf } from '@switchboard/events';
import {
  type Ending,
  type JobAttempt,
  type JobRecord,
  type JobResult,
  type JobTaker,
} from '@switchboard/jobs';
import {
  ObjectStoreError,
  OWNER_KEY_ID_METADATA,
  posterKey,
  videoKey,
  type ObjectStore,
} from '@switchboard/objectstore';
import { withSpan, withSpanIn, type Logger } from '@switchboard/telemetry';
import { PermanentJobError, type Backend } from '../backends/backend.js';
import { Mp4Encoder } from '../media/encode.js';
import { probeMedia } from '../media/probe.js';
import type { FfmpegPaths } from '../media/run-ffmpeg.js';
import type { AnimationMetrics } from '../metrics.js';
import { fetchInputs, removeUploads } from './inputs.js';
import { jobParams } from './params.js';

export interface RunnerOptions {
  readonly taker: JobTaker;
  readonly store: ObjectStore;
  readonly metrics: AnimationMetrics;
  readonly logger: Logger;
  readonly concurrency: number;
  readonly ffmpeg: FfmpegPaths;
  readonly encoderThreads: number;
  /** How long one pull waits on the server before asking again. */
  readonly pullExpiresMs?: number;
}

/** How long a job waits before it is tried again while the object store is unreachable. */
const STORE_OUTAGE_RETRY_MS = 5_000;

/** Absolute paths (model folders, temp files) never reach a job's public error message. */
const withoutPaths = (text: string): string => text.replace(/(?:[A-Za-z]:)?\/[^\s'"`:,)]+/g, '<path>');

export class JobRunner {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private readonly active = new Set<JobAttempt>();

  constructor(private readonly o: RunnerOptions) {}

  /** Starts pulling jobs of `backend`. */
  serve(backend: Backend): void {
    for (let slot = 0; slot < this.o.concurrency; slot++) this.loops.push(this.loop(backend));
  }

  private async loop(backend: Backend): Promise<void> {
    while (!this.stopping) {
      let msg: JsMsg | null;
      try {
        msg = await this.o.taker.next(backend.name, this.o.pullExpiresMs ?? 5000);
      } catch (error) {
        // NATS away (restarting, partitioned): keep trying; the jobs wait in the stream.
        if (!this.stopping) this.o.logger.warn({ err: error, backend: backend.name }, 'job pull failed');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      if (!msg) continue;
      if (this.stopping) {
        msg.nak(); // pulled while stopping: straight back for another worker
        break;
      }
      let attempt: JobAttempt | null = null;
      try {
        // Taking the job (its record to running) is the first step of its trace on this side.
        const taken = msg;
        attempt = await withSpanIn(
          traceContextOf(taken),
          'animation',
          'animation.take',
          { 'job.backend': backend.name },
          () => this.o.taker.start(taken),
        );
      } catch (error) {
        this.o.logger.warn({ err: error, backend: backend.name }, 'job start failed');
        msg.nak(1000);
      }
      if (attempt) await this.runTraced(backend, attempt);
    }
  }

  /** Each attempt is a span in the trace the job was submitted in, however long it queued. */
  private runTraced(backend: Backend, attempt: JobAttempt): Promise<void> {
    const attributes = {
      'job.id': attempt.record.job_id,
      'job.backend': backend.name,
      'job.attempt': attempt.record.attempts,
    };
    return withSpanIn(attempt.traceParent, 'animation', 'animation.attempt', attributes, async (span) => {
      await this.run(backend, attempt, (ending) => span.setAttribute('job.outcome', ending));
    });
  }

  private async run(backend: Backend, attempt: JobAttempt, ended: (ending: Ending) => void): Promise<void> {
    const { record } = attempt;
    const logger = this.o.logger.child({
      job_id: record.job_id,
      backend: backend.name,
      attempt: record.attempts,
    });
    const started = performance.now();
    const labels = { backend: backend.name };
    this.active.add(attempt);
    this.o.metrics.running.inc(labels);
    logger.info({ key_id: record.owner_key_id }, 'job started');
    const workDir = await mkdtemp(join(tmpdir(), 'animation-'));
    let stored = false;
    let ending: Ending;
    try {
      try {
        const result = await withSpan('animation', 'animation.render', { 'job.backend': backend.name }, () =>
          this.render(backend, attempt, workDir, logger),
        );
        stored = true;
        ending = await attempt.succeed(result);
        if (ending === 'succeeded') {
          const seconds = (performance.now() - started) / 1000;
          this.o.metrics.framesPerSecond.observe(labels, result.frames / seconds);
          this.o.metrics.attempts.observe(labels, record.attempts);
        }
      } catch (error) {
        ending = await this.settleFailure(attempt, error, logger);
      }
    } catch (error) {
      // The job store could not record how the attempt ended (NATS away). The heartbeat has
      // stopped and the message is not acknowledged, so it comes back after the ack wait and a
      // later attempt settles the job; this slot goes on pulling rather than dying with the error.
      logger.warn({ err: error }, 'job attempt not settled; it will be delivered again');
      ending = 'released';
    } finally {
      this.active.delete(attempt);
      this.o.metrics.running.dec(labels);
      await rm(workDir, { recursive: true, force: true });
    }
    ended(ending);
    await this.cleanUp(record, ending, stored, logger);
    this.o.metrics.jobs.inc({ ...labels, outcome: ending });
    this.o.metrics.duration.observe({ ...labels, outcome: ending }, (performance.now() - started) / 1000);
    logger.info({ outcome: ending, seconds: (performance.now() - started) / 1000 }, 'job ended');
  }

  private async render(
    backend: Backend,
    attempt: JobAttempt,
    workDir: string,
    logger: Logger,
  ): Promise<JobResult> {
    const { record, signal } = attempt;
    const inputs = await fetchInputs(this.o.store, record, workDir, signal);
    const target = join(workDir, 'video.mp4');
    const poster = join(workDir, 'poster.jpg');
    const encoder = new Mp4Encoder(target, {
      paths: this.o.ffmpeg,
      threads: this.o.encoderThreads,
      signal,
      poster,
    });
    await backend.render(
      {
        jobId: record.job_id,
        params: jobParams(record),
        inputs,
        workDir,
        signal,
        // The last 5 % is encoding and storing.
        progress: (fraction) => attempt.progress(Math.min(1, Math.max(0, fraction)) * 0.95),
        logger,
      },
      encoder,
    );
    const spec = await encoder.finished();
    if (encoder.transcoded) {
      // A vendor's video was resampled: count what came out (packets, so without decoding).
      const probed = await probeMedia(this.o.ffmpeg, target, { kind: 'video', countPackets: true, signal });
      if (probed.video?.frames !== spec.frames) {
        throw new Error(`the encoded video has ${probed.video?.frames ?? 0} frames, not ${spec.frames}`);
      }
    }
    await withSpan('animation', 'animation.store', { 'job.id': record.job_id }, () =>
      Promise.all([
        this.store(record, videoKey(record.job_id), target, 'video/mp4'),
        this.store(record, posterKey(record.job_id), poster, 'image/jpeg'),
      ]),
    );
    signal.throwIfAborted();
    attempt.progress(1);
    return {
      video_key: videoKey(record.job_id),
      poster_key: posterKey(record.job_id),
      fps: spec.fps,
      frames: spec.frames,
      duration_s: spec.frames / spec.fps,
      width: spec.width,
      height: spec.height,
    };
  }

  private async store(record: JobRecord, key: string, path: string, contentType: string): Promise<void> {
    const { size } = await stat(path);
    await this.o.store.put(key, createReadStream(path), {
      contentType,
      size,
      metadata: { [OWNER_KEY_ID_METADATA]: record.owner_key_id, 'job-id': record.job_id },
    });
  }

  private async settleFailure(attempt: JobAttempt, error: unknown, logger: Logger): Promise<Ending> {
    if (attempt.canceled) return attempt.dropCanceled();
    if (this.stopping && attempt.signal.aborted) return attempt.release();
    const permanent = error instanceof PermanentJobError;
    const message = withoutPaths(error instanceof Error ? error.message : String(error));
    if (error instanceof ObjectStoreError && error.unreachable) {
      logger.warn({ err: error }, 'object store unreachable; the job waits for it');
      return attempt.postpone(message, STORE_OUTAGE_RETRY_MS);
    }
    logger.warn({ err: error, permanent }, 'job attempt failed');
    return attempt.fail({ code: permanent ? error.code : 'internal', message }, permanent);
  }

  /** A canceled job leaves no result; a job that is over keeps no uploads. */
  private async cleanUp(record: JobRecord, ending: Ending, stored: boolean, logger: Logger): Promise<void> {
    try {
      if (ending === 'canceled' && stored) {
        await this.o.store.delete(videoKey(record.job_id));
        await this.o.store.delete(posterKey(record.job_id));
      }
      if (ending === 'succeeded' || ending === 'failed' || ending === 'canceled') {
        await removeUploads(this.o.store, record);
      }
    } catch (error) {
      logger.warn({ err: error }, 'job clean-up failed');
    }
  }

  /**
   * Stops pulling; running jobs may finish within `graceMs`, then they are handed back to the
   * queue (not counted as failed attempts) for another worker.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const deadline = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(this.loops), deadline]);
    for (const attempt of this.active) attempt.abort(new Error('the worker is stopping'));
    await Promise.all(this.loops);
  }
}
