import { SwitchboardError } from '@switchboard/errors';
import type { JobRecord } from '@switchboard/jobs';
import { z } from 'zod';
import { jobUpload, withJobMedia, type JobForm } from '../animation/job-upload.js';
import { submitJob } from '../animation/submission.js';
import { AnimateRequest } from '../contract/animation.js';
import {
  OpenAiVideo,
  openAiSurface,
  VideoContentQuery,
  VideoCreateRequest,
  VideoListQuery,
  VideoPath,
  videoErrors,
} from '../contract/openai.js';
import { json, jsonBodyErrors, keyErrors, rangeNotSatisfiable } from '../contract/responses.js';
import { route, type RouteDeps } from '../http/route.js';
import { serveJobVideo } from '../http/stored-file.js';
import { validate } from '../http/validate.js';

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
const videoForm: JobForm = {
  fileParts: { input_reference: 'image' },
  limits: (deps) => ({
    files: 1,
    // The client sends `input_reference: { image_url }` as a form field, often a data: URL: a
    // field may be as large as a JSON body carrying the same URL. OpenAI's fields plus our two
    // extensions are seven; eight bounds what the fields hold in memory.
    fields: 8,
    fieldSize: deps.config.http.jsonBodyLimitBytes,
    parts: 9,
  }),
  wording: {
    tooLarge: { message: "The image is larger than the key's tier allows.", param: 'input_reference' },
    unexpectedFile: (field) => `${field}: the only file part is input_reference`,
    malformed: 'form',
  },
  unsupported: 'Send the video request as application/json or multipart/form-data.',
};

/** The video routes are for the professional tier and up, like /animate. */
const videoSurface = { ...openAiSurface, tier: 'professional' } as const;

/** The size the video-diffusion back-end renders when none is asked. */
async function nativeSize(deps: RouteDeps): Promise<{ width?: number; height?: number }> {
  const entry = await deps.clients.animation.backend('video-diffusion');
  return { width: entry?.native_width, height: entry?.native_height };
}

/**
 * /v1/videos: OpenAI's video jobs over the animation jobs of POST /animate (professional tier and
 * up, like /animate).
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
export const openAiCreateVideoRoute = route({
  method: 'post',
  path: '/v1/videos',
  operationId: 'openAiCreateVideo',
  ...videoSurface,
  summary: 'Create a video (OpenAI shape)',
  description: `Queues an animation job on the \`video-diffusion\` back-end (as POST /animate) that animates \`input_reference\`; poll GET /v1/videos/{id}. Without \`input_reference\` → 400 with \`param: input_reference\`.`,
  body: {
    content: {
      'application/json': { schema: VideoCreateRequest },
      'multipart/form-data': {
        schema: VideoCreateRequest.extend({
          input_reference: z.string().optional().meta({
            contentMediaType: 'application/octet-stream',
            description:
              'The image (PNG, JPEG or WebP) as a file part, or `input_reference[image_url]` as a text part.',
          }),
        }).meta({ id: 'OpenAiVideoCreateForm' }),
        encoding: { input_reference: { contentType: 'image/png, image/jpeg, image/webp' } },
      },
    },
  },
  responses: { 200: { description: 'The video job, `queued`.', content: json(OpenAiVideo) } },
  errors: [...videoErrors, ...jsonBodyErrors, 'not_found', 'job_limit', 'quota_exceeded'],
  receive: jobUpload(videoForm),
  async handle({ req, res, deps }) {
    const job = await withJobMedia(req, async (media, stored) => {
      const raw = { ...(req.body as Record<string, unknown>) };
      // A form's `input_reference[image_url]`, when the form parser left it flat.
      if (raw['input_reference[image_url]'] !== undefined && raw.input_reference === undefined) {
        raw.input_reference = { image_url: raw['input_reference[image_url]'] };
        delete raw['input_reference[image_url]'];
      }
      const body = validate(VideoCreateRequest, raw);
      const reference =
        typeof body.input_reference === 'string' ? body.input_reference : body.input_reference?.image_url;
      if (reference !== undefined && stored.image) {
        throw new SwitchboardError('invalid_request', {
          message: 'input_reference: given both as a file part and as a URL',
          param: 'input_reference',
        });
      }
      if (reference === undefined && !stored.image) {
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
      try {
        stored.image ??= await media.fromString('image', reference!);
      } catch (error) {
        if (error instanceof SwitchboardError && error.param === 'image') {
          throw new SwitchboardError(error.code, {
            message: error.message.replace(/^image:/, 'input_reference:'),
            param: 'input_reference',
          });
        }
        throw error;
      }
      return submitJob(deps, res.locals.ctx.key!, { fields, media, stored });
    });
    return videoView(job, await nativeSize(deps));
  },
});

export const openAiListVideosRoute = route({
  method: 'get',
  path: '/v1/videos',
  operationId: 'openAiListVideos',
  ...videoSurface,
  summary: "List the key's videos (OpenAI shape)",
  description: `Every animation job of the key, newest first (jobs from POST /animate included, \`model\` naming their back-end).`,
  query: VideoListQuery,
  responses: {
    200: {
      description: 'A page of videos.',
      content: json(
        z
          .object({
            object: z.literal('list'),
            data: z.array(OpenAiVideo),
            first_id: z.string().nullable(),
            last_id: z.string().nullable(),
            has_more: z.boolean(),
          })
          .meta({ id: 'OpenAiVideoList' }),
      ),
    },
  },
  errors: [...videoErrors, 'invalid_request'],
  async handle({ res, query, deps }) {
    const page = await deps.clients.animation.list(res.locals.ctx.key!.id, {
      limit: query.limit,
      after: query.after,
    });
    const size = await nativeSize(deps);
    const data = page.data.map((job) => videoView(job, size));
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: page.has_more,
    };
  },
});

export const openAiGetVideoRoute = route({
  method: 'get',
  path: '/v1/videos/{id}',
  operationId: 'openAiGetVideo',
  ...videoSurface,
  summary: 'Get a video (OpenAI shape)',
  params: VideoPath,
  responses: { 200: { description: 'The video job.', content: json(OpenAiVideo) } },
  errors: [...videoErrors, 'job_not_found'],
  async handle({ req, res, deps }) {
    const job = await deps.clients.animation.get(res.locals.ctx.key!.id, String(req.params.id));
    return videoView(job, await nativeSize(deps));
  },
});

export const openAiDeleteVideoRoute = route({
  method: 'delete',
  path: '/v1/videos/{id}',
  operationId: 'openAiDeleteVideo',
  ...videoSurface,
  summary: 'Cancel a video (OpenAI shape)',
  description: `Cancels the job as DELETE /animate/{job_id} does: a queued job at once, a running one within 2 s; a job that already finished → \`409 job_finished\` (its files expire with the store's retention).`,
  params: VideoPath,
  responses: {
    200: {
      description: 'The job was canceled.',
      content: json(
        z
          .object({ id: z.string(), object: z.literal('video.deleted'), deleted: z.literal(true) })
          .meta({ id: 'OpenAiVideoDeleted' }),
      ),
    },
  },
  errors: [...videoErrors, 'job_not_found', 'job_finished'],
  async handle({ req, res, deps }) {
    const job = await deps.clients.animation.cancel(res.locals.ctx.key!.id, String(req.params.id));
    return { id: job.job_id, object: 'video.deleted', deleted: true };
  },
});

const mp4 = { 'video/mp4': { schema: z.string().meta({ contentMediaType: 'video/mp4' }) } };

export const openAiGetVideoContentRoute = route({
  method: 'get',
  path: '/v1/videos/{id}/content',
  operationId: 'openAiGetVideoContent',
  ...videoSurface,
  summary: 'Download a video (OpenAI shape)',
  description: `The MP4 of a completed video, served as GET /api/videos/{job_id}.mp4 (one \`Range\` → 206). A video not completed, or another key's, → 404.`,
  params: VideoPath,
  query: VideoContentQuery,
  headers: z.object({
    Range: z.string().optional().meta({ description: 'One byte range, e.g. `bytes=0-1048575`.' }),
  }),
  responses: {
    200: { description: 'The MP4.', content: mp4 },
    206: { description: 'The asked bytes.', content: mp4 },
    416: rangeNotSatisfiable('openai'),
  },
  errors: [...keyErrors, 'invalid_request', 'not_found', 'unavailable'],
  serve: ({ req, res, deps }) => serveJobVideo(deps.objects, String(req.params.id), req, res),
});

export const openAiVideoRoutes = [
  openAiCreateVideoRoute,
  openAiListVideosRoute,
  openAiGetVideoRoute,
  openAiDeleteVideoRoute,
  openAiGetVideoContentRoute,
];
