import type { Request, RequestHandler, Router } from 'express';
import multer from 'multer';
import { SwitchboardError } from '@switchboard/errors';
import { newJobId, type JobRecord } from '@switchboard/jobs';
import type { ObjectStore } from '@switchboard/objectstore';
import type { TierPolicies } from '@switchboard/keys';
import { fileParts } from '../animation/file-parts.js';
import { JobMedia, type StoredMedia } from '../animation/job-media.js';
import { jobSpec } from '../animation/submission.js';
import type { AnimationJobs } from '../clients/animation.js';
import { AnimateRequest } from '../contract/animation.js';
import { VideoContentQuery, VideoCreateRequest, VideoListQuery } from '../contract/openai.js';
import { hasBody, jsonBody } from '../http/json-body.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { serveJobVideo } from '../routes/stored-files.js';
import { fromMulterError, type MulterErrorWording } from '../http/multer-errors.js';

export interface VideoDeps {
  animation: AnimationJobs;
  objects: ObjectStore;
  tiers: TierPolicies;
  bodyLimitBytes: number;
}

type VideoRequest = Request & { media?: JobMedia; file_reference?: StoredMedia };

const unix = (iso: string | null) => (iso === null ? null : Math.floor(Date.parse(iso) / 1000));

const statusOf = {
  queued: 'queued',
  running: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  canceled: 'failed',
} as const;

/** An animation job in OpenAI's video shape (the size before completion: asked, else native). */
function videoView(job: JobRecord, native: { width?: number; height?: number }) {
  const width = job.result?.width ?? job.params.width ?? native.width;
  const height = job.result?.height ?? job.params.height ?? native.height;
  const error =
    job.error ?? (job.status === 'canceled' ? { code: 'canceled', message: 'The job was canceled.' } : null);
  return {
    id: job.job_id,
    object: 'video' as const,
    model: job.backend,
    status: statusOf[job.status],
    progress: Math.round(job.progress * 100),
    created_at: unix(job.created_at)!,
    completed_at: unix(job.finished_at),
    expires_at: null,
    seconds: String(job.result?.duration_s ?? job.params.duration_s ?? 4),
    size: width && height ? `${width}x${height}` : '',
    remixed_from_video_id: null,
    error: error ? { code: error.code, message: error.message } : null,
  };
}

/** The client's form takes one file part, the image to animate. */
const formErrors: MulterErrorWording = {
  tooLarge: { message: "The image is larger than the key's tier allows.", param: 'input_reference' },
  unexpectedFile: (field) => `${field}: the only file part is input_reference`,
  malformed: 'form',
};

/**
 * /v1/videos: OpenAI's video jobs over the animation jobs of API.md §5 (professional tier and up,
 * gated by auth/tiers.ts like /animate).
 *
 * - POST: JSON, or the form OpenAI's client sends, `{model?, prompt?, input_reference, seconds?,
 *   size?}` → a `video-diffusion` job whose image is `input_reference` (a data: URL or an
 *   `/api/images/…png` URL of this key, as a string or `{image_url}`; in a form also a file part).
 *   It is required (400 `param: input_reference`): the back-end animates an image. `prompt` is
 *   accepted and ignored (the back-end takes no text); `seconds` (a number-like string) becomes
 *   `duration_s`, `size` `WxH` becomes width/height (multiples of 64 within the bounds); `fps` and
 *   `seed` are extensions. The answer is the job as a video, `queued`.
 * - The video: `id` = job_id, `model` = the back-end, status queued → queued, running →
 *   in_progress, succeeded → completed, failed and canceled → failed (with `error`), `progress`
 *   = round(progress × 100), `created_at`/`completed_at` Unix seconds, `seconds`/`size` strings.
 * - GET list: OpenAI's list (`object: "list"`, `data`, `has_more`, `first_id`/`last_id`) with
 *   `after`/`limit`, over every job of the key, newest first.
 * - DELETE cancels the job (OpenAI's `video.deleted` answer); a finished job → 409 job_finished.
 * - GET content streams the MP4 exactly as /api/videos/<id>.mp4 (Range included); `variant`
 *   other than `video` → 400 `param: variant`.
 */
export function videosRouter(deps: VideoDeps): Router {
  const router = exactRouter();
  const json = jsonBody(deps.bodyLimitBytes);
  const forms = new Map(
    Object.entries(deps.tiers).map(([tier, policy]) => [
      tier,
      multer({
        // The `input_reference` file part is the job's image, stored while it streams in.
        storage: fileParts(
          () => 'image',
          (req, _field, media) => ((req as VideoRequest).file_reference = media),
        ),
        limits: {
          fileSize: policy.upload_limit_bytes,
          files: 1,
          // The client sends `input_reference: { image_url }` as a form field, often a data:
          // URL: a field may be as large as a JSON body carrying the same URL. OpenAI's fields
          // plus our two extensions are seven; eight bounds what the fields hold in memory.
          fields: 8,
          fieldSize: deps.bodyLimitBytes,
          parts: 9,
        },
      }).fields([{ name: 'input_reference', maxCount: 1 }]),
    ]),
  );

  const native = async () => {
    const catalogue = await deps.animation.board.catalogue();
    const entry = [...catalogue.values()].find((b) => b.backend === 'video-diffusion');
    return { width: entry?.native_width, height: entry?.native_height };
  };

  const prepare: RequestHandler = (req, res, next) => {
    const key = res.locals.ctx.key;
    if (!key) {
      next(new SwitchboardError('unauthorized'));
      return;
    }
    const limit = deps.tiers[key.tier].upload_limit_bytes;
    (req as VideoRequest).media = new JobMedia(deps.objects, newJobId(), key.id, limit);
    if (req.is('multipart/form-data')) {
      forms.get(key.tier)!(req, res, (error?: unknown) => {
        if (error === undefined) {
          next();
          return;
        }
        void (req as VideoRequest).media!.discard().finally(() => next(fromMulterError(error, formErrors)));
      });
      return;
    }
    if (hasBody(req.headers) && !req.is('application/json') && !req.is('application/*+json')) {
      next(
        new SwitchboardError('unsupported_media_type', {
          message: 'Send the video request as application/json or multipart/form-data.',
        }),
      );
      return;
    }
    json(req, res, next);
  };

  router.post('/videos', prepare, async (req: VideoRequest, res) => {
    const media = req.media!;
    try {
      const raw = { ...(req.body as Record<string, unknown>) };
      // A form's `input_reference[image_url]`, when the form parser left it flat.
      if (raw['input_reference[image_url]'] !== undefined && raw.input_reference === undefined) {
        raw.input_reference = { image_url: raw['input_reference[image_url]'] };
        delete raw['input_reference[image_url]'];
      }
      const body = validate(VideoCreateRequest, raw);
      const reference =
        typeof body.input_reference === 'string' ? body.input_reference : body.input_reference?.image_url;
      if (reference !== undefined && req.file_reference) {
        throw new SwitchboardError('invalid_request', {
          message: 'input_reference: given both as a file part and as a URL',
          param: 'input_reference',
        });
      }
      if (reference === undefined && !req.file_reference) {
        throw new SwitchboardError('invalid_request', {
          message: 'input_reference: is required (the image to animate)',
          param: 'input_reference',
        });
      }
      const [width, height] = body.size ? body.size.split('x').map(Number) : [undefined, undefined];
      const fields = AnimateRequest.parse({
        backend: 'video-diffusion',
        image: reference ?? 'file part',
        duration_s: body.seconds ?? undefined,
        width,
        height,
        fps: body.fps,
        seed: body.seed,
      });
      let image: StoredMedia;
      try {
        image = req.file_reference ?? (await media.fromString('image', reference!));
      } catch (error) {
        if (error instanceof SwitchboardError && error.param === 'image') {
          throw new SwitchboardError(error.code, {
            message: error.message.replace(/^image:/, 'input_reference:'),
            param: 'input_reference',
          });
        }
        throw error;
      }
      const key = res.locals.ctx.key!;
      const outcome = await deps.animation.board.submit({
        jobId: media.jobId,
        ownerKeyId: key.id,
        backend: 'video-diffusion',
        ...jobSpec(fields, { image }),
        activeLimit: deps.tiers[key.tier].animation_jobs,
      });
      res.json(videoView(outcome.job, await native()));
    } catch (error) {
      await media.discard();
      throw error;
    }
  });

  router.get('/videos', async (req, res) => {
    const query = validate(VideoListQuery, req.query);
    const page = await deps.animation.board.list(res.locals.ctx.key!.id, {
      limit: query.limit,
      after: query.after,
    });
    const size = await native();
    const data = page.data.map((job) => videoView(job, size));
    res.json({
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: page.has_more,
    });
  });

  router.get('/videos/:id', async (req, res) => {
    const job = await deps.animation.board.get(res.locals.ctx.key!.id, String(req.params.id));
    res.json(videoView(job, await native()));
  });

  router.delete('/videos/:id', async (req, res) => {
    const job = await deps.animation.board.cancel(res.locals.ctx.key!.id, String(req.params.id));
    res.json({ id: job.job_id, object: 'video.deleted', deleted: true });
  });

  router.get('/videos/:id/content', async (req, res) => {
    validate(VideoContentQuery, req.query);
    await serveJobVideo(deps.objects, String(req.params.id), req, res);
  });

  return router;
}
