import type { JobRecord } from './record.js';

/**
 * A job as its owner sees it: the API's job object, and the `data` of its `animate.job.*` events
 * (so a webhook receiver gets what a GET would have returned at that moment).
 */
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
    // The code stays a string here; the gateway's contract narrows it to the codes the workers write.
    error: job.error ? { code: job.error.code, message: job.error.message } : null,
  };
}

export type JobView = ReturnType<typeof jobView>;
