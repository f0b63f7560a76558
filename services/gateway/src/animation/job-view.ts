import type { JobRecord } from '@switchboard/jobs';
import type { JobErrorCode } from '../contract/animation.js';

/** A job as its owner sees it. */
export function jobView(job: JobRecord) {
  return {
    job_id: job.job_id,
    backend: job.backend,
    status: job.status,
    progress: job.progress,
    attempts: job.attempts,
    created_at: job.created_at,
    updated_at: job.updated_at,
    result: job.result
      ? {
          url: `/api/videos/${job.job_id}.mp4`,
          poster_url: `/api/videos/${job.job_id}.jpg`,
          fps: job.result.fps,
          frames: job.result.frames,
          duration_s: job.result.duration_s,
          width: job.result.width,
          height: job.result.height,
        }
      : null,
    // The record keeps the code as a string; the animation workers write only these.
    error: job.error ? { code: job.error.code as JobErrorCode, message: job.error.message } : null,
  };
}

/** The dashboard's row: the public view plus whose job it is. */
export function adminJobView(job: JobRecord) {
  return { ...jobView(job), key_id: job.owner_key_id };
}
