/**
 * /animate and the files of its jobs: the fields the handler validates (one schema for JSON
 * bodies and for the text parts of a form), the job as its owner sees it, and the list query
 * the owner's and the admin's lists share.
 */
import { backendNames, isJobId, jobStatuses } from '@switchboard/jobs';
import { requestLimits } from '@switchboard/contracts';
import { z } from 'zod';
import { multipleOf } from './responses.js';

const backend = z.enum(backendNames).meta({
  description:
    '`video-diffusion`: an image-to-video diffusion model animates the still image. `portrait`: a portrait-animation model moves the face, driven by `driving_video` or `audio`. `avatar`: a talking-avatar service makes the portrait speak `audio` or `text`.',
});

const drivers =
  'A field that does not apply to the chosen back-end is ignored. `portrait` needs `driving_video` or `audio` (not both); `avatar` needs `audio` or `text`; a missing driver is a 400 naming it.';

/** The fields that read the same in a JSON body and as text parts of a form (whose values are strings). */
const limits = requestLimits.animation;

function settings(multipart: boolean) {
  const n = () => (multipart ? z.coerce.number() : z.number());
  return {
    text: z
      .string()
      .min(1)
      .max(5000, 'must be at most 5000 characters')
      .optional()
      .meta({ description: '`avatar`: what the avatar says, when no `audio` is given.' }),
    voice: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[\w.:-]+$/, 'expected a vendor voice id')
      .optional()
      .meta({ description: "`avatar` with `text`: the vendor's voice id." }),
    fps: n().int().min(limits.fps.min).max(limits.fps.max).optional().meta({
      default: limits.defaultFps,
      description:
        "Frames per second. Default 24 for `video-diffusion`; for `portrait`, the driving video's rate when it has one.",
    }),
    duration_s: n().min(limits.durationS.min).max(limits.durationS.max).optional().meta({
      default: limits.defaultDurationS,
      description:
        'Length of the video. Default 4 for `video-diffusion`; `portrait` and `avatar` default to the length of their driver and cut it at `duration_s` when given.',
    }),
    seed: n()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .meta({ description: 'Chosen at random when omitted; every attempt of the job uses the same one.' }),
    width: multipleOf(n().int().min(limits.side.min).max(limits.side.max), limits.sideMultiple)
      .optional()
      .meta({ description: "`video-diffusion` only. Default: the model's native size." }),
    height: multipleOf(n().int().min(limits.side.min).max(limits.side.max), limits.sideMultiple)
      .optional()
      .meta({ description: "`video-diffusion` only. Default: the model's native size." }),
    motion_bucket_id: n()
      .int()
      .min(1)
      .max(255)
      .default(127)
      .meta({ description: '`video-diffusion`: how much motion (higher = more).' }),
    noise_aug_strength: n()
      .min(0)
      .max(1)
      .default(0.02)
      .meta({ description: '`video-diffusion`: noise added to the image (higher = further from it).' }),
  };
}

/** A JSON body: the media are URLs (a data: URL or one this API returned to the same key). */
export const AnimateRequest = z
  .object({
    backend,
    image: z.string({ error: 'is required' }).meta({
      description:
        'An image URL this API returned to the same key (`/api/images/img-….png`; another key’s is 404 `not_found`), or a `data:image/png|jpeg|webp;base64,…` URL.',
    }),
    driving_video: z.string().optional().meta({
      description:
        '`portrait`: the face video whose motion is transferred. A `data:video/…;base64,…` URL or a video URL this API returned to the same key (`/api/videos/job-….mp4`).',
    }),
    audio: z.string().optional().meta({
      description: '`portrait` (speech → head and lip motion) or `avatar`: a `data:audio/…;base64,…` URL.',
    }),
    ...settings(false),
  })
  .meta({
    id: 'AnimateRequest',
    description: `${drivers} Media in a JSON body are URLs; a body stays within the JSON body limit, so larger media go as file parts of a form.`,
  });

/**
 * The text parts of a form. A medium may come as a text part holding a URL (as in JSON) or as a
 * file part, which never reaches this schema (it is streamed to storage as it arrives).
 */
export const AnimateFormFields = z.object({
  backend,
  image: z.string().optional(),
  driving_video: z.string().optional(),
  audio: z.string().optional(),
  ...settings(true),
});

export type AnimateFields = z.output<typeof AnimateRequest> | z.output<typeof AnimateFormFields>;

const mediaAsFile = (what: string) =>
  z.string().meta({
    contentMediaType: 'application/octet-stream',
    description: `${what} A file part (its bytes decide its type, not its name), or a text part with a URL as in JSON.`,
  });

export const AnimateForm = AnimateFormFields.extend({
  image: mediaAsFile('The image (PNG, JPEG or WebP).'),
  driving_video: mediaAsFile('`portrait`: the face video (MP4, MOV, WebM, Ogg, AVI).').optional(),
  audio: mediaAsFile('`portrait` or `avatar`: the speech (WAV, MP3, FLAC, Ogg, M4A, WebM).').optional(),
}).meta({
  id: 'AnimateForm',
  description: `The same fields as the JSON body, as text parts, and the media as file parts, streamed to storage as they arrive; the tier's upload limit applies to their sum. ${drivers}`,
});

export const jobId = z.string().regex(/^job-/);
export const JobStatus = z.enum(jobStatuses).meta({ id: 'JobStatus' });

/** `status`, `limit`, `after`: the owner's list and the admin's take the same. */
export const JobListQuery = z.object({
  status: JobStatus.optional().meta({ description: 'Only jobs in this state.' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Jobs per page.' }),
  after: z.string().refine(isJobId, 'expected the job_id of the previous page’s last job').optional().meta({
    description: 'The last `job_id` of the previous page: only older jobs follow.',
    pattern: '^job-',
  }),
});

export const AnimateAccepted = z
  .object({
    job_id: jobId,
    status: JobStatus.meta({
      description: '`queued` for a new job; a repeated request gets the job it started, as it is now.',
    }),
    status_url: z.string().meta({ description: '`/animate/<job_id>`.' }),
  })
  .meta({
    id: 'AnimateAccepted',
    example: {
      job_id: 'job-0193a1b2c3d4-9f8e7d6c5b4a3921',
      status: 'queued',
      status_url: '/animate/job-0193a1b2c3d4-9f8e7d6c5b4a3921',
    },
  });

const JobResult = z
  .object({
    url: z.string().meta({
      description:
        '`/api/videos/<job_id>.mp4`: H.264 (`yuv420p`, `faststart`), exactly `frames` frames at `fps`.',
    }),
    poster_url: z.string().meta({ description: '`/api/videos/<job_id>.jpg`: a still frame of the video.' }),
    fps: z.number(),
    frames: z.number().int(),
    duration_s: z.number(),
    width: z.number().int(),
    height: z.number().int(),
  })
  .meta({ id: 'JobResult' });

const JobError = z
  .object({
    code: z
      .enum([
        'attempts_exhausted',
        'upstream_failed',
        'upstream_timeout',
        'invalid_request',
        'invalid_audio',
        'unavailable',
        'internal',
      ])
      .meta({
        description:
          '`attempts_exhausted`: every attempt failed (the message says why the last one did). `upstream_failed` / `upstream_timeout`: the avatar service failed or did not answer. `invalid_request` / `invalid_audio`: the media could not be decoded. `unavailable`: the back-end is not configured.',
      }),
    message: z.string(),
  })
  .meta({ id: 'JobError' });
/** The codes a failed job's record carries (written by the animation workers). */
export type JobErrorCode = z.infer<typeof JobError>['code'];

/** A job as its owner sees it (animation/job-view.ts builds it); the admin's view adds `key_id`. */
export const jobFields = {
  job_id: jobId,
  backend: z.enum(backendNames),
  status: JobStatus,
  progress: z.number().min(0).max(1),
  attempts: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Attempts started so far (a job whose worker died is retried on another).' }),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  result: z.union([JobResult, z.null()]).meta({ description: 'Set once the job `succeeded`.' }),
  error: z.union([JobError, z.null()]).meta({ description: 'Set once the job `failed`.' }),
};
export const Job = z.object(jobFields).meta({ id: 'Job' });

export const JobList = z
  .object({
    data: z.array(Job).meta({ description: 'Newest first.' }),
    has_more: z.boolean().meta({ description: 'Whether another page follows (ask with `after`).' }),
  })
  .meta({ id: 'JobList' });

export const JobPath = z.object({
  job_id: jobId.meta({ description: 'The animation job id. Jobs of other keys are `404 job_not_found`.' }),
});
