import type { Request } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { z } from 'zod';
import type { StoredMedia } from '../animation/job-media.js';
import { jobUpload, withJobMedia, type JobForm } from '../animation/job-upload.js';
import { jobView } from '../animation/job-view.js';
import { mediaFields, type MediaField } from '../animation/request.js';
import { checkDrivers, submitJob } from '../animation/submission.js';
import {
  AnimateAccepted,
  AnimateForm,
  AnimateFormFields,
  AnimateRequest,
  Job,
  JobList,
  JobListQuery,
  JobPath,
  type AnimateFields,
} from '../contract/animation.js';
import { headerRef, json, jsonBodyErrors, keyErrors } from '../contract/responses.js';
import { route } from '../http/route.js';
import { validate } from '../http/validate.js';

/** Stands for a JSON medium not yet stored, when only its presence matters. */
const pending: StoredMedia = { key: '', identity: '' };

const animateForm: JobForm = {
  fileParts: { image: 'image', driving_video: 'driving_video', audio: 'audio' },
  limits: () => ({ files: 3, fields: 16, fieldSize: 32 * 1024, parts: 19 }),
  wording: {
    tooLarge: { message: "The media are larger than the key's tier allows." },
    unexpectedFile: (field) => `${field}: file parts are image, driving_video and audio, one each`,
    malformed: 'form',
  },
  unsupported: 'Send the job as application/json, or as multipart/form-data with file parts for large media.',
  refuseDeclaredOversize: true,
  check(req: Request) {
    const idempotencyKey = req.get('idempotency-key');
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 255)) {
      throw new SwitchboardError('invalid_request', {
        message: 'Idempotency-Key must be 1 to 255 characters.',
        param: 'Idempotency-Key',
      });
    }
  },
};

/** The animation routes are for the professional tier and up. */
const animationSurface = { tag: 'Animation', auth: 'apiKey', tier: 'professional' } as const;

export const createAnimationRoute = route({
  method: 'post',
  path: '/animate',
  operationId: 'createAnimation',
  ...animationSurface,
  summary: 'Start an animation job',
  description: `Queues a job that turns an image into a video; poll \`Location\` for its progress. Jobs are accepted even while no animation worker runs (one that starts later takes them). Too many queued and running jobs for the key's tier → \`429 job_limit\`. An \`avatar\` job while the avatar service is not configured → \`503 unavailable\`.`,
  headers: z.object({
    'Idempotency-Key': z.string().max(255).optional().meta({
      description:
        'The same key and the same body within 24 h return the same job, also while the first request is still in flight; the same key with another body → `422 idempotency_key_reused`.',
    }),
  }),
  body: {
    content: {
      'application/json': { schema: AnimateRequest },
      'multipart/form-data': {
        schema: AnimateForm,
        encoding: {
          image: { contentType: 'image/png, image/jpeg, image/webp, text/plain' },
          driving_video: { contentType: 'video/*, text/plain' },
          audio: { contentType: 'audio/*, video/webm, text/plain' },
        },
      },
    },
  },
  responses: {
    202: {
      description: 'The job was queued (or, repeated, the job it started).',
      headers: { Location: headerRef('Location', 'The job: `/animate/<job_id>`.') },
      content: json(AnimateAccepted),
    },
  },
  errors: [
    ...keyErrors,
    ...jsonBodyErrors,
    'not_found',
    'idempotency_key_reused',
    'job_limit',
    'quota_exceeded',
    'unavailable',
  ],
  receive: jobUpload(animateForm),
  async handle({ req, res, deps }) {
    const job = await withJobMedia(req, async (media, stored) => {
      const multipart = req.is('multipart/form-data') !== false;
      const fields: AnimateFields = validate(multipart ? AnimateFormFields : AnimateRequest, req.body);
      // A missing driver is named before any JSON medium is decoded and stored.
      const given = (field: MediaField) =>
        stored[field] ?? (fields[field] === undefined ? undefined : pending);
      checkDrivers(fields, {
        image: given('image'),
        driving_video: given('driving_video'),
        audio: given('audio'),
      });
      for (const field of mediaFields) {
        const value = fields[field];
        if (value === undefined) continue;
        if (stored[field]) {
          throw new SwitchboardError('invalid_request', {
            message: `${field}: given both as a file part and as a text field`,
            param: field,
          });
        }
        stored[field] = await media.fromString(field, value);
      }
      checkDrivers(fields, stored);
      return submitJob(deps, res.locals.ctx.key!, {
        fields,
        media,
        stored,
        idempotencyKey: req.get('idempotency-key'),
      });
    });
    res.setHeader('Location', `/animate/${job.job_id}`);
    return { job_id: job.job_id, status: job.status, status_url: `/animate/${job.job_id}` };
  },
});

export const listAnimationsRoute = route({
  method: 'get',
  path: '/animate',
  operationId: 'listAnimations',
  ...animationSurface,
  summary: "List the key's animation jobs",
  description: `Newest first, a page at a time: pass the last \`job_id\` of a page as \`after\` for the next.`,
  query: JobListQuery,
  responses: { 200: { description: 'A page of jobs.', content: json(JobList) } },
  errors: [...keyErrors, 'invalid_request', 'unavailable'],
  async handle({ res, query, deps }) {
    const page = await deps.clients.animation.list(res.locals.ctx.key!.id, query);
    return { data: page.data.map(jobView), has_more: page.has_more };
  },
});

export const getAnimationRoute = route({
  method: 'get',
  path: '/animate/{job_id}',
  operationId: 'getAnimation',
  ...animationSurface,
  summary: 'Get an animation job',
  params: JobPath,
  responses: { 200: { description: 'The job.', content: json(Job) } },
  errors: [...keyErrors, 'job_not_found', 'unavailable'],
  handle: async ({ req, res, deps }) =>
    jobView(await deps.clients.animation.get(res.locals.ctx.key!.id, String(req.params.job_id))),
});

export const cancelAnimationRoute = route({
  method: 'delete',
  path: '/animate/{job_id}',
  operationId: 'cancelAnimation',
  ...animationSurface,
  summary: 'Cancel an animation job',
  description: `A queued job is canceled at once, a running one stops within 2 s; a job that already finished → \`409 job_finished\`.`,
  params: JobPath,
  responses: { 200: { description: 'The job, canceled.', content: json(Job) } },
  errors: [...keyErrors, 'job_not_found', 'job_finished', 'unavailable'],
  handle: async ({ req, res, deps }) =>
    jobView(await deps.clients.animation.cancel(res.locals.ctx.key!.id, String(req.params.job_id))),
});

/** Animation jobs of the key: start, list, read, cancel. */
export const animateRoutes = [
  createAnimationRoute,
  listAnimationsRoute,
  getAnimationRoute,
  cancelAnimationRoute,
];
