// From validated fields and stored media to a job on the board: the back-end's drivers, the
// parameters the worker gets (a seed drawn when none is given, so every attempt renders the
// same video), and the hash of the request that Idempotency-Key compares.
import { createHash, randomInt } from 'node:crypto';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { JobInputs, JobParams, JobRecord } from '@switchboard/jobs';
import type { KeyRecord } from '@switchboard/keys';
import { JOB_RESERVATION_MS, jobRecordId, jobReservation } from '../usage/job-usage.js';
import { meteringOf } from '../usage/metering-of.js';
import type { RouteDeps } from '../http/route.js';
import type { JobMedia, StoredMedia } from './job-media.js';
import type { AnimateFields } from '../contract/animation.js';
import type { MediaField } from './request.js';

export type MediaSet = Partial<Record<MediaField, StoredMedia>>;

const missing = (param: string, message: string) =>
  new SwitchboardError('invalid_request', { message: `${param}: ${message}`, param });

/** What each back-end needs besides the image; a field that does not apply is ignored. */
export function checkDrivers(fields: AnimateFields, media: MediaSet): void {
  if (!media.image) throw missing('image', 'is required');
  if (fields.backend === 'portrait') {
    if (!media.driving_video && !media.audio) {
      throw missing('driving_video', 'the portrait back-end needs a driving_video or an audio');
    }
    if (media.driving_video && media.audio) {
      throw missing('audio', 'give the portrait back-end a driving_video or an audio, not both');
    }
  }
  if (fields.backend === 'avatar' && !media.audio && fields.text === undefined) {
    throw missing('audio', 'the avatar back-end needs an audio or a text');
  }
}

/** The media and parameters of the chosen back-end only. */
export function jobSpec(fields: AnimateFields, media: MediaSet): { params: JobParams; inputs: JobInputs } {
  const diffusion = fields.backend === 'video-diffusion';
  const avatar = fields.backend === 'avatar';
  const params: JobParams = {
    fps: fields.fps,
    duration_s: fields.duration_s,
    seed: fields.seed ?? randomInt(0, 2 ** 31),
    motion_bucket_id: fields.motion_bucket_id,
    noise_aug_strength: fields.noise_aug_strength,
    ...(diffusion ? { width: fields.width, height: fields.height } : {}),
    ...(avatar && !media.audio ? { text: fields.text, voice: fields.voice } : {}),
  };
  const inputs: JobInputs = {
    image: media.image!.key,
    ...(fields.backend === 'portrait' && media.driving_video
      ? { driving_video: media.driving_video.key }
      : {}),
    ...(!diffusion && media.audio ? { audio: media.audio.key } : {}),
  };
  return { params, inputs };
}

/**
 * The request as Idempotency-Key sees it: the fields given (not defaults drawn here) and each
 * medium's content hash or reference — so the same request sent as JSON or as a form, or with
 * fields in another order, is the same request.
 */
export function bodyHash(fields: AnimateFields, media: MediaSet): string {
  const canonical = {
    ...Object.fromEntries(
      Object.entries(fields)
        .filter(([name, value]) => value !== undefined && !['image', 'driving_video', 'audio'].includes(name))
        .sort(([a], [b]) => a.localeCompare(b)),
    ),
    media: Object.fromEntries(
      Object.entries(media)
        .filter(([, value]) => value !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, value]) => [name, value.identity]),
    ),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

export interface JobSubmission {
  fields: AnimateFields;
  /** The job's media store; its id is the job's. */
  media: JobMedia;
  stored: MediaSet;
  idempotencyKey?: string | undefined;
}

/**
 * Puts a job on the board, for POST /animate and POST /v1/videos alike. A back-end a worker said
 * it cannot run is 503 at once; a repeated request (same Idempotency-Key and body) gets the job
 * it started, and the media stored for this one are discarded.
 */
export async function submitJob(deps: RouteDeps, owner: KeyRecord, job: JobSubmission): Promise<JobRecord> {
  const {
    clients: { animation },
    config: { tiers },
  } = deps;
  const { fields, media, stored } = job;
  if ((await animation.backend(fields.backend))?.configured === false) {
    throw new SwitchboardError('unavailable', {
      message: `The ${fields.backend} back-end is not configured on this cluster.`,
    });
  }
  const submission = (activeLimit: number) => ({
    jobId: media.jobId,
    ownerKeyId: owner.id,
    backend: fields.backend,
    ...jobSpec(fields, stored),
    activeLimit,
    idempotency:
      job.idempotencyKey === undefined
        ? undefined
        : { key: job.idempotencyKey, bodyHash: bodyHash(fields, stored) },
  });
  let metered;
  try {
    // Reserved under the job's own id, settled or released when the job ends (usage/job-usage.ts).
    metered = await meteringOf(deps).admitFor(owner, {
      capability: 'animation',
      model: fields.backend,
      id: jobRecordId(media.jobId),
      ...jobReservation(fields),
      deadlineMs: JOB_RESERVATION_MS,
    });
  } catch (error) {
    // A repeated request gets its job whatever the quota says now: the job reserved when it was
    // first sent. Asked with no room for a new job, the board answers a repeat with its job and
    // refuses anything else before creating it (the Idempotency-Key claim is given back).
    if (job.idempotencyKey === undefined || !isSwitchboardError(error) || error.code !== 'quota_exceeded')
      throw error;
    const earlier = await animation.submit(submission(0)).catch(() => undefined);
    if (earlier?.kind !== 'duplicate') throw error;
    await media.discard();
    return earlier.job;
  }
  const outcome = await animation
    .submit(submission(tiers[owner.tier].animation_jobs))
    .catch(async (error: unknown) => {
      await metered.release();
      throw error;
    });
  if (outcome.kind === 'duplicate') {
    // The repeated request's job holds its own reservation already: this one's is given back.
    await metered.release();
    await media.discard();
  }
  return outcome.job;
}
