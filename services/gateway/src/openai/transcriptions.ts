import { z } from 'zod';
import { TranscriptionFields, VerboseTranscript, openAiSurface } from '../contract/openai.js';
import { workerErrors } from '../contract/responses.js';
import { audioEncoding, uploadErrors } from '../contract/transcription.js';
import { perApp, route } from '../http/route.js';
import { validate } from '../http/validate.js';
import { contentTypes, render, type Transcript } from '../transcripts/format.js';
import { transcriptionUpload } from '../transcripts/upload.js';
import { admitFirst, admittedCall } from '../usage/admit-first.js';
import { transcriptionValues } from '../usage/meter-values.js';

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
  ...openAiSurface,
  summary: 'Transcribe audio (OpenAI shape)',
  description:
    "Streamed to the worker exactly like POST /transcribe, within the key's tier's upload limit. Form fields may come in any order, before or after `file` (the openai client sends the file first), with the same result: recognition starts once the whole form has arrived.",
  body: {
    content: {
      'multipart/form-data': {
        schema: TranscriptionFields.extend({
          file: z.string().meta({ contentMediaType: 'application/octet-stream', description: 'The audio.' }),
        }).meta({ id: 'OpenAiTranscriptionRequest' }),
        encoding: audioEncoding,
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
  // The document lists each status's codes in this order: unknown_model after invalid_audio (400),
  // no_capacity after model_loading (503).
  errors: [...uploadErrors, 'quota_exceeded', 'unknown_model', 'no_capacity', ...workerErrors],
  receive: admitFirst(
    (deps) => uploads(deps).receive,
    (deps) => ({
      capability: 'whisper',
      check: ['requests', 'audio_seconds'],
      deadlineMs: deps.config.workers.whisper.deadlineMs,
    }),
  ),
  async serve({ req, res, deps }) {
    const transcript = await uploads(deps).finish(req);
    await admittedCall(res).record(transcriptionValues(transcript.duration_s), transcript.model);
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
