import type { Router } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { z } from 'zod';
import { exactRouter } from '../http/router.js';
import type { AnimationClient, Job } from '../clients/animation.js';
import { callContext } from '../clients/call-context.js';
import type { TierName, TierPolicy } from '../config.js';
import { jsonBody } from '../http/json-body.js';
import { validate } from '../http/validate.js';

const imageUrl = z
  .string()
  .refine(
    (v) =>
      /^data:image\/(png|jpeg);base64,[A-Za-z0-9+/=\s]+$/.test(v) ||
      /^\/api\/images\/img-[A-Za-z0-9-]+\.png$/.test(v),
    'expected an image URL this API returned (/api/images/…) or a data:image/png|jpeg;base64 URL',
  );

const animateBody = z
  .object({
    backend: z.enum(['video-diffusion', 'portrait', 'avatar']),
    image: imageUrl,
    audio: z
      .string()
      .regex(/^data:audio\/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+$/, 'expected a data:audio/…;base64 URL')
      .optional(),
    fps: z.number().int().min(1).max(60).default(24),
    duration_s: z.number().min(0.5).max(60).default(4),
    seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .superRefine((body, ctx) => {
    if (body.backend !== 'video-diffusion' && body.audio === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['audio'],
        message: `is required for the ${body.backend} backend`,
      });
    }
  });

const jobId = /^job-[A-Za-z0-9-]{1,64}$/;

/** The public shape of a job (API.md §5). */
function jobView(job: Job) {
  return {
    job_id: job.job_id,
    backend: job.backend,
    status: job.status,
    progress: job.progress,
    created_at: job.created_at,
    updated_at: job.updated_at,
    result: job.result
      ? {
          url: `/api/videos/${job.result.video_id}.mp4`,
          fps: job.result.fps,
          frames: job.result.frames,
          duration_s: job.result.duration_s,
          width: job.result.width,
          height: job.result.height,
        }
      : null,
    error: job.error ? { code: job.error.code, message: job.error.message } : null,
  };
}

function checkedJobId(raw: string): string {
  if (!jobId.test(raw)) throw new SwitchboardError('job_not_found');
  return raw;
}

/** /animate (API.md §5); the tier gate runs before this router. */
export function animateRouter(
  animation: AnimationClient,
  tiers: Readonly<Record<TierName, Readonly<TierPolicy>>>,
  bodyLimitBytes: number,
): Router {
  const router = exactRouter();

  router.post(
    '/animate',
    // JSON bodies stay within JSON_BODY_LIMIT_BYTES like every other route (API.md §5): a body is
    // parsed whole in memory, so a tier's upload limit here would let a few callers hold
    // gigabytes of gateway memory at once. Larger media belongs in a streamed upload.
    jsonBody(bodyLimitBytes),
    async (req, res) => {
      const body = validate(animateBody, req.body);
      const idempotencyKey = req.get('idempotency-key') ?? '';
      if (idempotencyKey.length > 255) {
        throw new SwitchboardError('invalid_request', {
          message: 'Idempotency-Key is longer than 255 characters.',
        });
      }
      const tier = res.locals.ctx.key?.tier ?? 'basic';
      const job = await animation.submit(
        {
          backend: body.backend,
          image: body.image,
          audio: body.backend === 'video-diffusion' ? '' : (body.audio ?? ''),
          fps: body.fps,
          duration_s: body.duration_s,
          seed: body.seed === undefined ? undefined : String(body.seed),
          idempotency_key: idempotencyKey,
          max_active_jobs: tiers[tier].animation_jobs,
        },
        callContext(res),
      );
      res.status(202).json({ job_id: job.job_id, status: job.status, status_url: `/animate/${job.job_id}` });
    },
  );

  router.get('/animate/:jobId', async (req, res) => {
    res.json(jobView(await animation.get(checkedJobId(req.params.jobId), callContext(res))));
  });

  router.delete('/animate/:jobId', async (req, res) => {
    res.json(jobView(await animation.cancel(checkedJobId(req.params.jobId), callContext(res))));
  });

  return router;
}
