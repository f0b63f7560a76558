/** POST /transcribe: the form fields the handler validates (text parts next to the file part). */
import { defaultTierPolicies, tiers } from '@switchboard/keys';
import { z } from 'zod';
import { transcriptFormats } from '../transcripts/format.js';
import { declareRoute } from './registry.js';
import { headerRef, keyErrors, workerErrors } from './responses.js';

/** The text parts; multer hands them over as strings, next to the streamed `file` part. */
export const TranscribeFields = z.object({
  language: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^([a-z]{2})?$/, 'expected an ISO 639-1 code')
    .optional()
    .meta({ description: 'ISO 639-1 code; auto-detected when omitted.' }),
  format: z.enum(transcriptFormats).default('text').meta({ description: '`json` is an extension.' }),
});

const TranscribeRequest = TranscribeFields.extend({
  file: z.string().meta({
    contentMediaType: 'application/octet-stream',
    description:
      'The audio: mp3, wav, m4a, ogg, flac, webm and whatever else the decoder reads. Any length (long audio is windowed); streamed to the worker.',
  }),
}).meta({ id: 'TranscribeRequest' });

const Transcript = z
  .object({
    text: z.string(),
    language: z.string().meta({ description: 'ISO 639-1 code.' }),
    duration_s: z.number().min(0),
    segments: z.array(
      z.object({
        start: z.number().min(0).meta({ description: 'Seconds.' }),
        end: z.number().min(0).meta({ description: 'Seconds.' }),
        text: z.string(),
      }),
    ),
  })
  .meta({ id: 'Transcript' });

const uploadLimits = tiers.map(
  (tier) => `${tier} ${defaultTierPolicies[tier].upload_limit_bytes / 1_000_000} MB`,
);

declareRoute({
  method: 'post',
  path: '/transcribe',
  modelCalls: 'whisper',
  operationId: 'transcribe',
  tag: 'Transcription',
  auth: 'apiKey',
  summary: 'Transcribe audio',
  description: `The upload is streamed to the worker; it may be as large as the key's tier allows (${uploadLimits.join(', ')} by default). Form fields may come in any order, before or after \`file\`, with the same result: recognition starts once the whole form has arrived. A malformed form (no boundary, cut short, a control character in the file name) is \`400 invalid_request\`.`,
  body: {
    content: {
      'multipart/form-data': {
        schema: TranscribeRequest,
        encoding: { file: { contentType: 'audio/*, video/webm, application/octet-stream' } },
      },
    },
  },
  responses: {
    200: {
      description: 'The transcript in the requested `format`.',
      headers: { 'Content-Language': headerRef('Content-Language') },
      content: {
        'text/plain; charset=utf-8': {
          schema: z.string().meta({ description: '`format=text`: the plain text.' }),
        },
        'application/x-subrip': {
          schema: z
            .string()
            .meta({ description: '`format=srt`: cues numbered from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm`.' }),
        },
        'text/vtt': {
          schema: z
            .string()
            .meta({ description: '`format=vtt`: starts with `WEBVTT`, `HH:MM:SS.mmm --> HH:MM:SS.mmm`.' }),
        },
        'application/json': { schema: Transcript },
      },
    },
  },
  errors: [
    ...keyErrors,
    'invalid_request',
    'invalid_audio',
    'payload_too_large',
    'unsupported_media_type',
    'model_loading',
    ...workerErrors,
  ],
});
