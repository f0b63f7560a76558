// The D-ID Talks API as it travels on the wire: the bodies this adapter sends and the parts of the
// answers it reads. Answers are parsed by hand, field by field, because they come from outside:
// a field of the wrong type is a vendor fault, never a crash or an `undefined` deep in the logic.
//
//   POST /images  multipart `image`         → 201 {id, url}          (url is opaque: s3://…)
//   POST /audios  multipart `audio`         → 201 {id, url, duration}
//   POST /talks   {source_url, script, config} → 201 {id: "tlk_…", status: "created", …}
//   GET  /talks/{id} → {status: created|started|done|error|rejected, result_url, duration, error}
//   errors        → {kind, description, details}
import type { JobParams } from '../backend.js';

/** D-ID's own default Microsoft voice, used when a text job names none (AVATAR_DEFAULT_VOICE). */
export const DEFAULT_VOICE = 'en-US-JennyNeural';

export type TalkScript =
  | { readonly type: 'audio'; readonly audio_url: string }
  | {
      readonly type: 'text';
      readonly input: string;
      readonly provider: { readonly type: 'microsoft'; readonly voice_id: string };
    };

export interface CreateTalkBody {
  readonly source_url: string;
  readonly script: TalkScript;
  readonly config: {
    /** An MP4 is what the transcoder expects. */
    readonly result_format: 'mp4';
    /** Put the animated face back into the whole picture, so the clip shows what was uploaded. */
    readonly stitch: boolean;
  };
}

/**
 * The script for a job: the uploaded audio when there is one (audio wins over text),
 * else the text spoken by `voice` (or the default voice); neither → undefined (the caller refuses
 * the job as `invalid_request`).
 */
export function buildScript(
  params: Pick<JobParams, 'text' | 'voice'>,
  audioUrl: string | undefined,
  defaultVoice: string,
): TalkScript | undefined {
  if (audioUrl !== undefined) return { type: 'audio', audio_url: audioUrl };
  const text = params.text?.trim();
  if (!text) return undefined;
  const voice = params.voice?.trim();
  return { type: 'text', input: text, provider: { type: 'microsoft', voice_id: voice || defaultVoice } };
}

export function buildTalkBody(sourceUrl: string, script: TalkScript): CreateTalkBody {
  return { source_url: sourceUrl, script, config: { result_format: 'mp4', stitch: true } };
}

/** A 2xx answer that does not have the shape the API documents. */
export class VendorResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VendorResponseError';
  }
}

type Json = Record<string, unknown>;

function object(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new VendorResponseError(`${what}: the answer is not a JSON object`);
  }
  return value as Json;
}

function text(body: Json, field: string, what: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') {
    throw new VendorResponseError(`${what}: '${field}' is missing or not a string`);
  }
  return value;
}

const optionalNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;

export interface Upload {
  readonly id: string | undefined;
  /** Passed back to /talks as given; the adapter never fetches it. */
  readonly url: string;
}

export function parseUpload(value: unknown, what: string): Upload {
  const body = object(value, what);
  return { id: typeof body.id === 'string' ? body.id : undefined, url: text(body, 'url', what) };
}

export function parseCreatedTalk(value: unknown): { readonly id: string } {
  return { id: text(object(value, 'POST /talks'), 'id', 'POST /talks') };
}

export const talkStatuses = ['created', 'started', 'done', 'error', 'rejected'] as const;
export type TalkStatus = (typeof talkStatuses)[number];

/** The vendor's own words about a failure: `{kind, description}` (details are not kept). */
export interface VendorFault {
  readonly kind: string | undefined;
  readonly description: string | undefined;
}

export type Talk =
  | { readonly status: 'created' | 'started' }
  | { readonly status: 'done'; readonly resultUrl: string; readonly duration: number | undefined }
  | { readonly status: 'error' | 'rejected'; readonly fault: VendorFault }
  /** A status this adapter does not know: polled on like `started` until the deadline. */
  | { readonly status: 'unknown'; readonly raw: string };

export function parseFault(value: unknown): VendorFault {
  if (typeof value !== 'object' || value === null) return { kind: undefined, description: undefined };
  const body = value as Json;
  return {
    kind: typeof body.kind === 'string' ? body.kind : undefined,
    description: typeof body.description === 'string' ? body.description : undefined,
  };
}

export function parseTalk(value: unknown): Talk {
  const what = 'GET /talks/{id}';
  const body = object(value, what);
  const status = text(body, 'status', what);
  switch (status) {
    case 'created':
    case 'started':
      return { status };
    case 'done':
      return { status, resultUrl: text(body, 'result_url', what), duration: optionalNumber(body.duration) };
    case 'error':
    case 'rejected':
      // Asynchronous failures carry `error: {kind, description}`; some carry it at the top level.
      return { status, fault: parseFault(body.error ?? body) };
    default:
      return { status: 'unknown', raw: status.slice(0, 40) };
  }
}
