/** API.md §5: animation jobs (professional tier or higher) and their videos. */
import {
  errorResponses,
  headerRef,
  json,
  jsonBodyErrors,
  keyErrors,
  parameterRef,
  ref,
  success,
  type ErrorCode,
  type Header,
  type Operation,
  type Parameter,
  type Paths,
  type Ref,
  type Schema,
  type Schemas,
} from './components.js';

const backend = {
  type: 'string',
  enum: ['video-diffusion', 'portrait', 'avatar'],
  description:
    '`video-diffusion`: an image-to-video diffusion model animates the still image. `portrait`: a portrait-animation model moves the face, driven by `driving_video` or `audio`. `avatar`: a talking-avatar service makes the portrait speak `audio` or `text`.',
};

/** The fields that are the same in a JSON body and as text parts of a form. */
const settings: Record<string, Schema> = {
  text: {
    type: 'string',
    minLength: 1,
    maxLength: 5000,
    description: '`avatar`: what the avatar says, when no `audio` is given.',
  },
  voice: {
    type: 'string',
    maxLength: 200,
    pattern: '^[\\w.:-]+$',
    description: "`avatar` with `text`: the vendor's voice id.",
  },
  fps: {
    type: 'integer',
    minimum: 1,
    maximum: 60,
    default: 24,
    description:
      "Frames per second. Default 24 for `video-diffusion`; for `portrait`, the driving video's rate when it has one.",
  },
  duration_s: {
    type: 'number',
    minimum: 0.5,
    maximum: 60,
    default: 4,
    description:
      'Length of the video. Default 4 for `video-diffusion`; `portrait` and `avatar` default to the length of their driver and cut it at `duration_s` when given.',
  },
  seed: {
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Chosen at random when omitted; every attempt of the job uses the same one.',
  },
  width: {
    type: 'integer',
    minimum: 64,
    maximum: 2048,
    multipleOf: 64,
    description: "`video-diffusion` only. Default: the model's native size.",
  },
  height: {
    type: 'integer',
    minimum: 64,
    maximum: 2048,
    multipleOf: 64,
    description: "`video-diffusion` only. Default: the model's native size.",
  },
  motion_bucket_id: {
    type: 'integer',
    minimum: 1,
    maximum: 255,
    default: 127,
    description: '`video-diffusion`: how much motion (higher = more).',
  },
  noise_aug_strength: {
    type: 'number',
    minimum: 0,
    maximum: 1,
    default: 0.02,
    description: '`video-diffusion`: noise added to the image (higher = further from it).',
  },
};

const drivers =
  'A field that does not apply to the chosen back-end is ignored. `portrait` needs `driving_video` or `audio` (not both); `avatar` needs `audio` or `text`; a missing driver is a 400 naming it.';

const mediaAsFile = (what: string): Schema => ({
  type: 'string',
  contentMediaType: 'application/octet-stream',
  description: `${what} A file part (its bytes decide its type, not its name), or a text part with a URL as in JSON.`,
});

const jobErrorCodes = [
  'attempts_exhausted',
  'upstream_failed',
  'upstream_timeout',
  'invalid_request',
  'invalid_audio',
  'unavailable',
  'internal',
];

/** A job as its owner sees it; the admin's view adds `key_id` (paths-admin.ts). */
export const jobProperties: Record<string, Schema | Ref> = {
  job_id: { type: 'string', pattern: '^job-' },
  backend: { type: 'string', enum: backend.enum },
  status: ref('JobStatus'),
  progress: { type: 'number', minimum: 0, maximum: 1 },
  attempts: {
    type: 'integer',
    minimum: 0,
    description: 'Attempts started so far (a job whose worker died is retried on another).',
  },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
  result: { oneOf: [ref('JobResult'), { type: 'null' }], description: 'Set once the job `succeeded`.' },
  error: { oneOf: [ref('JobError'), { type: 'null' }], description: 'Set once the job `failed`.' },
};
export const jobRequired = Object.keys(jobProperties);

export const animateSchemas: Schemas = {
  AnimateRequest: {
    type: 'object',
    description: `${drivers} Media in a JSON body are URLs; a body stays within the JSON body limit, so larger media go as file parts of a form.`,
    required: ['backend', 'image'],
    properties: {
      backend,
      image: {
        type: 'string',
        maxLength: 2048,
        description:
          'An image URL this API returned to the same key (`/api/images/img-….png`; another key’s is 404 `not_found`), or a `data:image/png|jpeg|webp;base64,…` URL.',
      },
      driving_video: {
        type: 'string',
        description:
          '`portrait`: the face video whose motion is transferred. A `data:video/…;base64,…` URL or a video URL this API returned to the same key (`/api/videos/job-….mp4`).',
      },
      audio: {
        type: 'string',
        description: '`portrait` (speech → head and lip motion) or `avatar`: a `data:audio/…;base64,…` URL.',
      },
      ...settings,
    },
  },
  AnimateForm: {
    type: 'object',
    description: `The same fields as the JSON body, as text parts, and the media as file parts, streamed to storage as they arrive; the tier's upload limit applies to their sum. ${drivers}`,
    required: ['backend', 'image'],
    properties: {
      backend,
      image: mediaAsFile('The image (PNG, JPEG or WebP).'),
      driving_video: mediaAsFile('`portrait`: the face video (MP4, MOV, WebM, Ogg, AVI).'),
      audio: mediaAsFile('`portrait` or `avatar`: the speech (WAV, MP3, FLAC, Ogg, M4A, WebM).'),
      ...settings,
    },
  },
  AnimateAccepted: {
    type: 'object',
    required: ['job_id', 'status', 'status_url'],
    properties: {
      job_id: { type: 'string', pattern: '^job-' },
      status: {
        ...ref('JobStatus'),
        description: '`queued` for a new job; a repeated request gets the job it started, as it is now.',
      },
      status_url: { type: 'string', description: '`/animate/<job_id>`.' },
    },
    example: {
      job_id: 'job-0193a1b2c3d4-9f8e7d6c5b4a3921',
      status: 'queued',
      status_url: '/animate/job-0193a1b2c3d4-9f8e7d6c5b4a3921',
    },
  },
  JobStatus: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
  JobResult: {
    type: 'object',
    required: ['url', 'poster_url', 'fps', 'frames', 'duration_s', 'width', 'height'],
    properties: {
      url: {
        type: 'string',
        description:
          '`/api/videos/<job_id>.mp4`: H.264 (`yuv420p`, `faststart`), exactly `frames` frames at `fps`.',
      },
      poster_url: { type: 'string', description: '`/api/videos/<job_id>.jpg`: a still frame of the video.' },
      fps: { type: 'number' },
      frames: { type: 'integer' },
      duration_s: { type: 'number' },
      width: { type: 'integer' },
      height: { type: 'integer' },
    },
  },
  JobError: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: {
        type: 'string',
        enum: jobErrorCodes,
        description:
          '`attempts_exhausted`: every attempt failed (the message says why the last one did). `upstream_failed` / `upstream_timeout`: the avatar service failed or did not answer. `invalid_request` / `invalid_audio`: the media could not be decoded. `unavailable`: the back-end is not configured.',
      },
      message: { type: 'string' },
    },
  },
  Job: { type: 'object', required: jobRequired, properties: jobProperties },
  JobList: {
    type: 'object',
    required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', items: ref('Job'), description: 'Newest first.' },
      has_more: { type: 'boolean', description: 'Whether another page follows (ask with `after`).' },
    },
  },
};

/** `status`, `limit`, `after`: the owner's list and the admin's take the same. */
export const jobListParameters: readonly Parameter[] = [
  { name: 'status', in: 'query', description: 'Only jobs in this state.', schema: { ...ref('JobStatus') } },
  {
    name: 'limit',
    in: 'query',
    description: 'Jobs per page.',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
  },
  {
    name: 'after',
    in: 'query',
    description: 'The last `job_id` of the previous page: only older jobs follow.',
    schema: { type: 'string', pattern: '^job-' },
  },
];

const tierNote = 'Needs a key of the `professional` tier or higher (`403 tier_required`).';
const animateErrors: readonly ErrorCode[] = [...keyErrors, 'tier_required'];

function jobOperation(operation: Operation): Operation {
  return {
    'x-required-tier': 'professional',
    ...operation,
    description: `${operation.description ?? ''} ${tierNote}`.trim(),
  };
}

const location: Header = {
  description: 'The job: `/animate/<job_id>`.',
  required: true,
  schema: { type: 'string' },
};

/** The poster and the MP4: another key's file is answered exactly as a missing one. */
function videoFileOperation(kind: 'mp4' | 'jpg'): Operation {
  const mp4 = kind === 'mp4';
  const type = mp4 ? 'video/mp4' : 'image/jpeg';
  const body = { [type]: { schema: { type: 'string', contentMediaType: type } } };
  const fileHeaders = { 'Accept-Ranges': headerRef('Accept-Ranges') };
  return {
    operationId: mp4 ? 'getAnimationVideo' : 'getAnimationPoster',
    tags: ['Animation'],
    summary: mp4 ? 'Download the video of a job' : 'Download the poster frame of a job',
    description: `${
      mp4
        ? 'The H.264 MP4 of a job that succeeded, to the key that created it.'
        : 'A JPEG still of the video of a job that succeeded, to the key that created it.'
    } Any other key gets 404, exactly as for a missing file. One byte range (\`Range: bytes=a-b\`, \`bytes=a-\` or \`bytes=-n\`) is answered with 206 and only those bytes, so players can seek; a header listing several ranges, or one that is not a valid byte range, gets the whole file (200); a range starting past the end gets 416. \`If-Range\` always gets the whole file (no validators are sent).`,
    parameters: [
      {
        name: 'job_id',
        in: 'path',
        required: true,
        description: 'The job id (`job-…`).',
        schema: { type: 'string', pattern: '^job-' },
      },
      {
        name: 'Range',
        in: 'header',
        description: 'One byte range, e.g. `bytes=0-1048575`, `bytes=1048576-` or `bytes=-4096`.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: success('apiKey', mp4 ? 'The MP4.' : 'The JPEG.', body, fileHeaders),
      206: success('apiKey', 'The asked bytes.', body, {
        ...fileHeaders,
        'Content-Range': headerRef('Content-Range'),
      }),
      ...errorResponses('apiKey', [...keyErrors, 'not_found', 'unavailable']),
      // No error code covers it, so no JSON body: clients only read Content-Range here.
      416: success(
        'apiKey',
        'Range Not Satisfiable: the range starts past the end of the file. No body.',
        undefined,
        {
          'Content-Range': headerRef('Content-Range', '`bytes */<size of the file>`.'),
        },
      ),
    },
  };
}

export const animatePaths: Paths = {
  '/animate': {
    post: jobOperation({
      operationId: 'createAnimation',
      tags: ['Animation'],
      summary: 'Start an animation job',
      description:
        "Queues a job that turns an image into a video; poll `Location` for its progress. Jobs are accepted even while no animation worker runs (one that starts later takes them). Too many queued and running jobs for the key's tier → `429 job_limit`. An `avatar` job while the avatar service is not configured → `503 unavailable`.",
      parameters: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          description:
            'The same key and the same body within 24 h return the same job, also while the first request is still in flight; the same key with another body → `422 idempotency_key_reused`.',
          schema: { type: 'string', maxLength: 255 },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: ref('AnimateRequest') },
          'multipart/form-data': {
            schema: ref('AnimateForm'),
            encoding: {
              image: { contentType: 'image/png, image/jpeg, image/webp, text/plain' },
              driving_video: { contentType: 'video/*, text/plain' },
              audio: { contentType: 'audio/*, video/webm, text/plain' },
            },
          },
        },
      },
      responses: {
        202: success(
          'apiKey',
          'The job was queued (or, repeated, the job it started).',
          json(ref('AnimateAccepted')),
          {
            Location: location,
          },
        ),
        ...errorResponses('apiKey', [
          ...animateErrors,
          ...jsonBodyErrors,
          'not_found',
          'idempotency_key_reused',
          'job_limit',
          'unavailable',
        ]),
      },
    }),
    get: jobOperation({
      operationId: 'listAnimations',
      tags: ['Animation'],
      summary: "List the key's animation jobs",
      description:
        'Newest first, a page at a time: pass the last `job_id` of a page as `after` for the next.',
      parameters: jobListParameters,
      responses: {
        200: success('apiKey', 'A page of jobs.', json(ref('JobList'))),
        ...errorResponses('apiKey', [...animateErrors, 'invalid_request', 'unavailable']),
      },
    }),
  },
  '/animate/{job_id}': {
    get: jobOperation({
      operationId: 'getAnimation',
      tags: ['Animation'],
      summary: 'Get an animation job',
      parameters: [parameterRef('JobId')],
      responses: {
        200: success('apiKey', 'The job.', json(ref('Job'))),
        ...errorResponses('apiKey', [...animateErrors, 'job_not_found', 'unavailable']),
      },
    }),
    delete: jobOperation({
      operationId: 'cancelAnimation',
      tags: ['Animation'],
      summary: 'Cancel an animation job',
      description:
        'A queued job is canceled at once, a running one stops within 2 s; a job that already finished → `409 job_finished`.',
      parameters: [parameterRef('JobId')],
      responses: {
        200: success('apiKey', 'The job, canceled.', json(ref('Job'))),
        ...errorResponses('apiKey', [...animateErrors, 'job_not_found', 'job_finished', 'unavailable']),
      },
    }),
  },
  '/api/videos/{job_id}.mp4': { get: videoFileOperation('mp4') },
  '/api/videos/{job_id}.jpg': { get: videoFileOperation('jpg') },
};
