import type { ListOptions } from '@switchboard/jobs';
import { z } from 'zod';
import { adminJobView } from '../animation/job-view.js';
import type { AnimationJobs } from '../clients/animation.js';
import { AdminJob, AdminJobList, adminSurface } from '../contract/administration.js';
import { JobListQuery } from '../contract/animation.js';
import { adminErrors, json } from '../contract/responses.js';
import { route } from '../http/route.js';

/** How many jobs /admin/api/status carries (newest first): what the dashboard shows. */
export const STATUS_JOBS = 50;

/** A page of every owner's jobs, newest first, as the admin sees them (with the owner's key id). */
export async function adminJobPage(animation: AnimationJobs, options: ListOptions) {
  const page = await animation.list(null, options);
  return { data: page.data.map(adminJobView), has_more: page.has_more };
}

export const listAllJobsRoute = route({
  method: 'get',
  path: '/admin/api/jobs',
  operationId: 'listAllJobs',
  ...adminSurface,
  summary: 'List the animation jobs of every key',
  description: 'Newest first, a page at a time: pass the last `job_id` of a page as `after` for the next.',
  query: JobListQuery,
  responses: { 200: { description: 'A page of jobs.', content: json(AdminJobList) } },
  errors: [...adminErrors, 'invalid_request', 'unavailable'],
  handle: ({ query, deps }) => adminJobPage(deps.clients.animation, query),
});

export const cancelAnyJobRoute = route({
  method: 'delete',
  path: '/admin/api/jobs/{job_id}',
  operationId: 'cancelAnyJob',
  ...adminSurface,
  summary: "Cancel any key's animation job",
  description:
    "As the owner's cancel: a queued job at once, a running one within 2 s; `animate.job.canceled` is published. A job that already finished → `409 job_finished`.",
  params: z.object({ job_id: z.string().regex(/^job-/).meta({ description: 'The job id, of any key.' }) }),
  responses: { 200: { description: 'The job, canceled.', content: json(AdminJob) } },
  errors: [...adminErrors, 'job_not_found', 'job_finished', 'unavailable'],
  // A malformed id is simply not found (the board checks it before touching NATS).
  handle: async ({ req, deps }) =>
    adminJobView(await deps.clients.animation.cancel(null, String(req.params.job_id))),
});

/**
 * /admin/api/jobs: every owner's animation jobs, and cancelling any of them. The board writes
 * the canceled record and publishes `animate.job.canceled` itself, as for an owner's cancel.
 */
export const jobsRoutes = [listAllJobsRoute, cancelAnyJobRoute];
