import type { Request, RequestHandler, Router } from 'express';
import multer, { MulterError } from 'multer';
import { SwitchboardError } from '@switchboard/errors';
import { newJobId } from '@switchboard/jobs';
import type { ObjectStore } from '@switchboard/objectstore';
import { fileParts } from '../animation/file-parts.js';
import { JobMedia, type StoredMedia } from '../animation/job-media.js';
import { mediaFields, type MediaField } from '../animation/request.js';
import {
  AnimateFormFields,
  AnimateRequest,
  JobListQuery,
  type AnimateFields,
} from '../contract/animation.js';
import { bodyHash, checkDrivers, jobSpec, type MediaSet } from '../animation/submission.js';
import type { AnimationJobs } from '../clients/animation.js';
import type { TierPolicies } from '@switchboard/keys';
import { hasBody, jsonBody } from '../http/json-body.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { jobView } from './job-view.js';
import { fromMulterError, type MulterErrorWording } from '../http/multer-errors.js';

type AnimateRequest = Request & { media?: JobMedia; stored?: MediaSet };

/** Stands for a JSON medium not yet stored, when only its presence matters. */
const pending: StoredMedia = { key: '', identity: '' };

const formErrors: MulterErrorWording = {
  tooLarge: { message: "The media are larger than the key's tier allows." },
  unexpectedFile: (field) => `${field}: file parts are image, driving_video and audio, one each`,
  malformed: 'form',
};

/** /animate (API.md §5); the tier gate runs before this router. */
export function animateRouter(
  animation: AnimationJobs,
  objects: ObjectStore,
  tiers: TierPolicies,
  bodyLimitBytes: number,
): Router {
  const router = exactRouter();
  const json = jsonBody(bodyLimitBytes);
  const forms = new Map(
    Object.entries(tiers).map(([tier, policy]) => [
      tier,
      multer({
        storage: fileParts(
          (fieldname) => fieldname as MediaField,
          (req, field, media) => (((req as AnimateRequest).stored ??= {})[field] = media),
        ),
        limits: {
          fileSize: policy.upload_limit_bytes,
          files: 3,
          fields: 16,
          fieldSize: 32 * 1024,
          parts: 19,
        },
      }).fields(mediaFields.map((name) => ({ name, maxCount: 1 }))),
    ]),
  );

  /** A job id and a place for its media, before any byte of the body is read. */
  const prepare: RequestHandler = (req, res, next) => {
    const key = res.locals.ctx.key;
    if (!key) {
      next(new SwitchboardError('unauthorized'));
      return;
    }
    const limit = tiers[key.tier].upload_limit_bytes;
    (req as AnimateRequest).media = new JobMedia(objects, newJobId(), key.id, limit);
    const idempotencyKey = req.get('idempotency-key');
    if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > 255)) {
      next(
        new SwitchboardError('invalid_request', {
          message: 'Idempotency-Key must be 1 to 255 characters.',
          param: 'Idempotency-Key',
        }),
      );
      return;
    }
    if (req.is('multipart/form-data')) {
      // Refuse at once what is certainly too large; the streamed count catches the rest.
      if (Number(req.get('content-length') ?? 0) > limit + 64 * 1024) {
        next(fromMulterError(new MulterError('LIMIT_FILE_SIZE', 'image'), formErrors));
        return;
      }
      forms.get(key.tier)!(req, res, (error?: unknown) => {
        if (error === undefined) {
          next();
          return;
        }
        // A form cut short keeps none of the parts already stored, before the answer goes out.
        void (req as AnimateRequest).media!.discard().finally(() => next(fromMulterError(error, formErrors)));
      });
      return;
    }
    if (hasBody(req.headers) && !req.is('application/json') && !req.is('application/*+json')) {
      next(
        new SwitchboardError('unsupported_media_type', {
          message:
            'Send the job as application/json, or as multipart/form-data with file parts for large media.',
        }),
      );
      return;
    }
    json(req, res, next);
  };

  router.post('/animate', prepare, async (req: AnimateRequest, res) => {
    const media = req.media!;
    try {
      const multipart = req.is('multipart/form-data') !== false;
      const fields: AnimateFields = validate(multipart ? AnimateFormFields : AnimateRequest, req.body);
      const stored: MediaSet = { ...req.stored };
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
      if (!(await animation.isConfigured(fields.backend))) {
        throw new SwitchboardError('unavailable', {
          message: `The ${fields.backend} back-end is not configured on this cluster.`,
        });
      }
      const key = res.locals.ctx.key!;
      const idempotencyKey = req.get('idempotency-key');
      const outcome = await animation.board.submit({
        jobId: media.jobId,
        ownerKeyId: key.id,
        backend: fields.backend,
        ...jobSpec(fields, stored),
        activeLimit: tiers[key.tier].animation_jobs,
        idempotency:
          idempotencyKey === undefined
            ? undefined
            : { key: idempotencyKey, bodyHash: bodyHash(fields, stored) },
      });
      if (outcome.kind === 'duplicate') await media.discard();
      const job = outcome.job;
      res.status(202);
      res.setHeader('Location', `/animate/${job.job_id}`);
      res.json({ job_id: job.job_id, status: job.status, status_url: `/animate/${job.job_id}` });
    } catch (error) {
      await media.discard();
      throw error;
    }
  });

  router.get('/animate', async (req, res) => {
    const query = validate(JobListQuery, req.query);
    const page = await animation.board.list(res.locals.ctx.key!.id, query);
    res.json({ data: page.data.map(jobView), has_more: page.has_more });
  });

  router.get('/animate/:job_id', async (req, res) => {
    res.json(jobView(await animation.board.get(res.locals.ctx.key!.id, String(req.params.job_id))));
  });

  router.delete('/animate/:job_id', async (req, res) => {
    res.json(jobView(await animation.board.cancel(res.locals.ctx.key!.id, String(req.params.job_id))));
  });

  return router;
}
