/** API.md §5: animation jobs (professional tier or higher). */
import {
  errorResponses,
  json,
  jsonBody,
  jsonBodyErrors,
  keyErrors,
  parameterRef,
  ref,
  success,
  workerErrors,
  type ErrorCode,
  type Operation,
  type Paths,
  type Schemas,
} from './components.js';

export const animateSchemas: Schemas = {
  AnimateRequest: {
    type: 'object',
    required: ['backend', 'image'],
    properties: {
      backend: { type: 'string', enum: ['video-diffusion', 'portrait', 'avatar'] },
      image: {
        type: 'string',
        description:
          'An image URL this API returned (`/api/images/img-….png`), or a `data:image/png|jpeg;base64,…` URL.',
      },
      audio: {
        type: 'string',
        pattern: '^data:audio/',
        description:
          'A `data:audio/…;base64,…` URL. Required for `portrait` and `avatar`; ignored by `video-diffusion`.',
      },
      fps: { type: 'integer', minimum: 1, maximum: 60, default: 24 },
      duration_s: { type: 'number', minimum: 0.5, maximum: 60, default: 4 },
      seed: { type: 'integer', minimum: 0 },
    },
    if: { properties: { backend: { enum: ['portrait', 'avatar'] } }, required: ['backend'] },
    then: { required: ['audio'] },
  },
  AnimateAccepted: {
    type: 'object',
    required: ['job_id', 'status', 'status_url'],
    properties: {
      job_id: { type: 'string', pattern: '^job-' },
      status: { const: 'queued' },
      status_url: { type: 'string', description: '`/animate/<job_id>`.' },
    },
  },
  JobStatus: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'canceled'] },
  JobResult: {
    type: 'object',
    required: ['url', 'fps', 'frames', 'duration_s', 'width', 'height'],
    properties: {
      url: { type: 'string', description: '`/api/videos/<job_id>.mp4`.' },
      fps: { type: 'integer' },
      frames: { type: 'integer' },
      duration_s: { type: 'number' },
      width: { type: 'integer' },
      height: { type: 'integer' },
    },
  },
  Job: {
    type: 'object',
    required: ['job_id', 'backend', 'status', 'progress', 'created_at', 'updated_at', 'result', 'error'],
    properties: {
      job_id: { type: 'string', pattern: '^job-' },
      backend: { type: 'string', enum: ['video-diffusion', 'portrait', 'avatar'] },
      status: ref('JobStatus'),
      progress: { type: 'number', minimum: 0, maximum: 1 },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      result: { oneOf: [ref('JobResult'), { type: 'null' }], description: 'Set once the job `succeeded`.' },
      error: {
        description: 'Set once the job `failed`; says so when every attempt failed.',
        oneOf: [
          {
            type: 'object',
            required: ['code', 'message'],
            properties: { code: { type: 'string' }, message: { type: 'string' } },
          },
          { type: 'null' },
        ],
      },
    },
  },
};

const tierNote = 'Needs a key of the `professional` tier or higher (`403 tier_required`).';
const animateErrors: readonly ErrorCode[] = [...keyErrors, 'tier_required'];

function jobOperation(operation: Operation): Operation {
  return {
    'x-required-tier': 'professional',
    ...operation,
    description: `${operation.description ?? ''} ${tierNote}`.trim(),
  };
}

export const animatePaths: Paths = {
  '/animate': {
    post: jobOperation({
      operationId: 'createAnimation',
      tags: ['Animation'],
      summary: 'Start an animation job',
      description:
        "A job that turns an image (and audio, for `portrait` and `avatar`) into a video. Too many running jobs for the key's tier → `429 job_limit`.",
      parameters: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          description: 'The same key and body within 24 h returns the same job.',
          schema: { type: 'string', maxLength: 255 },
        },
      ],
      requestBody: jsonBody('AnimateRequest'),
      responses: {
        202: success('apiKey', 'The job was queued.', json(ref('AnimateAccepted'))),
        ...errorResponses('apiKey', [...animateErrors, ...jsonBodyErrors, 'job_limit', ...workerErrors]),
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
        ...errorResponses('apiKey', [...animateErrors, 'job_not_found', ...workerErrors]),
      },
    }),
    delete: jobOperation({
      operationId: 'cancelAnimation',
      tags: ['Animation'],
      summary: 'Cancel an animation job',
      parameters: [parameterRef('JobId')],
      responses: {
        200: success(
          'apiKey',
          'The job, as canceled (or as it finished, if it already had).',
          json(ref('Job')),
        ),
        ...errorResponses('apiKey', [...animateErrors, 'job_not_found', ...workerErrors]),
      },
    }),
  },
  '/api/videos/{job_id}.mp4': {
    get: {
      operationId: 'getAnimationVideo',
      tags: ['Animation'],
      summary: 'Download the video of a job',
      description:
        'The H.264 MP4 of a job that succeeded, to the key that created it; any other key gets 404.',
      parameters: [
        {
          name: 'job_id',
          in: 'path',
          required: true,
          description: 'The job id (`job-…`).',
          schema: { type: 'string', pattern: '^job-' },
        },
      ],
      responses: {
        200: success('apiKey', 'The MP4.', {
          'video/mp4': { schema: { type: 'string', contentMediaType: 'video/mp4' } },
        }),
        ...errorResponses('apiKey', [...keyErrors, 'not_found', ...workerErrors]),
      },
    },
  },
};
