import type { Router } from 'express';
import type { JobBoard, ListOptions } from '@switchboard/jobs';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { JobListQuery } from '../contract/animation.js';
import { adminJobView } from '../routes/job-view.js';

/** How many jobs /admin/api/status carries (newest first): what the dashboard shows. */
export const STATUS_JOBS = 50;

/** A page of every owner's jobs, newest first, as the admin sees them (with the owner's key id). */
export async function adminJobPage(board: JobBoard, options: ListOptions) {
  const page = await board.list(null, options);
  return { data: page.data.map(adminJobView), has_more: page.has_more };
}

/**
 * /admin/api/jobs: every owner's animation jobs, and cancelling any of them. The board writes
 * the canceled record and publishes `animate.job.canceled` itself, as for an owner's cancel.
 */
export function jobsRouter(board: JobBoard): Router {
  const router = exactRouter();

  router.get('/jobs', async (req, res) => {
    // Express gives repeated parameters as arrays; the schema then refuses them as the wrong type.
    const query = validate(JobListQuery, { ...(req.query as Record<string, unknown>) });
    res.json(await adminJobPage(board, query));
  });

  router.delete('/jobs/:job_id', async (req, res) => {
    // A malformed id is simply not found (the board checks it before touching NATS).
    res.json(adminJobView(await board.cancel(null, String(req.params.job_id))));
  });

  return router;
}
