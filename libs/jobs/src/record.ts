// The job record kept in the jobs KV bucket: the one definition the gateway (which writes it at
// submission and answers GET /animate from it) and the workers (which move it along) share.
// Parsed with a schema on every read, so a record written by another version fails loudly.
import { z } from 'zod';
import { backendNames } from './names.js';

export const jobStatuses = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const isFinished = (status: JobStatus): boolean =>
  status === 'succeeded' || status === 'failed' || status === 'canceled';

const params = z.object({
  fps: z.number().optional(),
  duration_s: z.number().optional(),
  seed: z.number().int(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  motion_bucket_id: z.number(),
  noise_aug_strength: z.number(),
  text: z.string().optional(),
  voice: z.string().optional(),
});

/** Object-store keys of the job's media (uploads under animation-inputs/<job id>/, or a result of the same key). */
const inputs = z.object({
  image: z.string(),
  driving_video: z.string().optional(),
  audio: z.string().optional(),
});

const result = z.object({
  /** Object-store key of the MP4 (`videos/<job id>.mp4`). */
  video_key: z.string(),
  poster_key: z.string().optional(),
  fps: z.number(),
  frames: z.number().int(),
  duration_s: z.number(),
  width: z.number().int(),
  height: z.number().int(),
});

const error = z.object({ code: z.string(), message: z.string() });

export const jobRecordSchema = z.object({
  job_id: z.string(),
  owner_key_id: z.string(),
  backend: z.enum(backendNames),
  status: z.enum(jobStatuses),
  progress: z.number(),
  attempts: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  params,
  inputs,
  result: result.nullable(),
  error: error.nullable(),
  /** Why the previous attempt ended, kept for the attempts_exhausted message. */
  last_error: z.string().nullable(),
  /** Stream sequence of the job's queue message (to drop it from the queue on cancel). */
  queue_seq: z.number().int().nullable(),
});

export type JobRecord = z.infer<typeof jobRecordSchema>;
export type JobParams = JobRecord['params'];
export type JobInputs = JobRecord['inputs'];
export type JobResult = NonNullable<JobRecord['result']>;
export type JobError = NonNullable<JobRecord['error']>;

export const encodeRecord = (record: JobRecord): Uint8Array =>
  new TextEncoder().encode(JSON.stringify(record));

export const decodeRecord = (bytes: Uint8Array): JobRecord =>
  jobRecordSchema.parse(JSON.parse(new TextDecoder().decode(bytes)));

/** The job's message on the work queue: just enough to find the record. */
export interface JobMessage {
  readonly job_id: string;
  readonly owner_key_id: string;
}
