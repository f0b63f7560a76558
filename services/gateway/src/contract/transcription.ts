/** POST /transcribe: the form fields the handler validates (text parts next to the file part). */
import { defaultTierPolicies, tiers } from '@switchboard/keys';
import { z } from 'zod';
import { transcriptFormats } from '../transcripts/format.js';
import { keyErrors } from './responses.js';

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

export const TranscribeRequest = TranscribeFields.extend({
  file: z.string().meta({
    contentMediaType: 'application/octet-stream',
    description:
      'The audio: mp3, wav, m4a, ogg, flac, webm and whatever else the decoder reads. Any length (long audio is windowed); streamed to the worker.',
  }),
}).meta({ id: 'TranscribeRequest' });

export const Transcript = z
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

export const uploadLimits = tiers.map(
  (tier) => `${tier} ${defaultTierPolicies[tier].upload_limit_bytes / 1_000_000} MB`,
);

/** The audio part's media types: both transcription routes stream it to the same worker. */
export const audioEncoding = { file: { contentType: 'audio/*, video/webm, application/octet-stream' } };

/** What both transcription uploads can fail with, before the worker's own failures. */
export const uploadErrors = [
  ...keyErrors,
  'invalid_request',
  'invalid_audio',
  'payload_too_large',
  'unsupported_media_type',
  'model_loading',
] as const;
