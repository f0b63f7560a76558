import { z } from 'zod';
import { TranscriptionFields, VerboseTranscript } from '../contract/openai.js';
import { keyErrors, workerErrors } from '../contract/responses.js';
import { perApp, route } from '../http/route.js';
import { validate } from '../http/validate.js';
import { contentTypes, render, type Transcript } from '../transcripts/format.js';
import { transcriptionUpload } from '../transcripts/upload.js';

function readFields(body: unknown) {
  return validate(TranscriptionFields, body ?? {});
}

const uploads = perApp((deps) =>
  transcriptionUpload(deps.clients.whisper, deps.config.tiers, (body) => {
    const fields = readFields(body);
    return { language: fields.language ?? '', model: fields.model ?? '', format: 'json' };
  }),
);

/** OpenAI's `verbose_json`: the segments numbered, times in seconds. */
function verbose(transcript: Transcript) {
  return {
    task: 'transcribe',
    language: transcript.language,
    duration: transcript.duration_s,
    text: transcript.text.trim(),
    segments: transcript.segments.map((segment, id) => ({
      id,
      start: segment.start,
      end: segment.end,
      text: segment.text.trim(),
    })),
  };
}

/**
 * POST /v1/audio/transcriptions: the upload streamed to the worker like POST /transcribe's; the
 * worker returns segments, rendered here in OpenAI's `response_format`.
 */
export const openAiTranscribeRoute = route({
  method: 'post',
  path: '/v1/audio/transcriptions',
  modelCalls: 'whisper',
  operationId: 'openAiTranscribe',
  tag: 'OpenAI-compatible',
  auth: 'apiKey',
  errorDialect: 'openai',
  summary: 'Transcribe audio (OpenAI shape)',
  description:
    "Streamed to the worker exactly like POST /transcribe, within the key's tier's upload limit. Form fields may come in any order, before or after `file` (the openai client sends the file first), with the same result: recognition starts once the whole form has arrived.",
  body: {
    content: {
      'multipart/form-data': {
        schema: TranscriptionFields.extend({
          file: z.string().meta({ contentMediaType: 'application/octet-stream', description: 'The audio.' }),
        }).meta({ id: 'OpenAiTranscriptionRequest' }),
        encoding: { file: { contentType: 'audio/*, video/webm, application/octet-stream' } },
      },
    },
  },
  responses: {
    200: {
      description: 'The transcript in `response_format`.',
      content: {
        'application/json': {
          schema: z.union([
            z.object({ text: z.string() }).meta({ id: 'OpenAiTranscription' }),
            VerboseTranscript,
          ]),
        },
        'text/plain; charset=utf-8': { schema: z.string().meta({ description: '`text`.' }) },
        'application/x-subrip': { schema: z.string().meta({ description: '`srt`.' }) },
        'text/vtt': { schema: z.string().meta({ description: '`vtt`.' }) },
      },
    },
  },
  errors: [
    ...keyErrors,
    'invalid_request',
    'invalid_audio',
    'unknown_model',
    'payload_too_large',
    'unsupported_media_type',
    'model_loading',
    'no_capacity',
    ...workerErrors,
  ],
  receive: (deps) => uploads(deps).receive,
  async serve({ req, res, deps }) {
    const transcript = await uploads(deps).finish(req);
    const format = readFields(req.body).response_format;
    if (transcript.language) res.setHeader('Content-Language', transcript.language);
    switch (format) {
      case 'json':
        res.json({ text: transcript.text.trim() });
        return;
      case 'verbose_json':
        res.json(verbose(transcript));
        return;
      default:
        res.setHeader('Content-Type', contentTypes[format]);
        res.send(render(transcript, format));
    }
  },
});
