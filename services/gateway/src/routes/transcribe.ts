import { z } from 'zod';
import { headerRef, workerErrors } from '../contract/responses.js';
import {
  TranscribeFields,
  TranscribeRequest,
  Transcript,
  audioEncoding,
  uploadErrors,
  uploadLimits,
} from '../contract/transcription.js';
import { perApp, route } from '../http/route.js';
import { validate } from '../http/validate.js';
import { contentTypes, render, type TranscriptFormat } from '../transcripts/format.js';
import { transcriptionUpload } from '../transcripts/upload.js';
import { admitFirst, admittedCall } from '../usage/admit-first.js';
import { transcriptionValues } from '../usage/meter-values.js';

/** Validates the text parts seen so far; called again once the whole form is read. */
function readFields(body: unknown) {
  const fields = validate(TranscribeFields, body ?? {});
  return { language: fields.language ?? '', format: fields.format, model: '' };
}

const uploads = perApp((deps) => transcriptionUpload(deps.clients.whisper, deps.config.tiers, readFields));

/** Speech to text, streamed from the client through the gateway to the worker. */
export const transcribeRoute = route({
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
        encoding: audioEncoding,
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
  errors: [...uploadErrors, 'quota_exceeded', ...workerErrors],
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
    const format: TranscriptFormat = readFields(req.body).format;
    res.setHeader('Content-Type', contentTypes[format]);
    if (transcript.language) res.setHeader('Content-Language', transcript.language);
    res.send(render(transcript, format));
  },
});
