import { jobView as ownerJobView, type JobRecord } from '@switchboard/jobs';
import type { JobErrorCode } from '../contract/animation.js';

/** A job as its owner sees it (built in @switchboard/jobs, which its events carry too). */
export function jobView(job: JobRecord) {
  const view = ownerJobView(job);
  // The record keeps the code as a string; the animation workers write only these.
  return {
    ...view,
    error: view.error ? { code: view.error.code as JobErrorCode, message: view.error.message } : null,
  };
}

/** The dashboard's row: the public view plus whose job it is. */
export function adminJobView(job: JobRecord) {
  return { ...jobView(job), key_id: job.owner_key_id };
}
