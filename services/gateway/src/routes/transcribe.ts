import type { Router } from 'express';
import type { TierPolicies } from '@switchboard/keys';
import { exactRouter } from '../http/router.js';
import type { WhisperWorker } from '../clients/whisper.js';
import { contentTypes, render, type TranscriptFormat } from '../transcripts/format.js';
import { TranscribeFields } from '../contract/transcription.js';
import { validate } from '../http/validate.js';
import { transcriptionUpload } from './transcription-upload.js';

/** Validates the text parts seen so far; called again once the whole form is read. */
function readFields(body: unknown) {
  const fields = validate(TranscribeFields, body ?? {});
  return { language: fields.language ?? '', format: fields.format, model: '' };
}

/** POST /transcribe (API.md §3), streamed from the client through the gateway to the worker. */
export function transcribeRouter(whisper: WhisperWorker, tiers: TierPolicies): Router {
  const router = exactRouter();
  const upload = transcriptionUpload(whisper, tiers, readFields);
  router.post('/transcribe', upload.receive, async (req, res) => {
    const transcript = await upload.finish(req);
    const format: TranscriptFormat = readFields(req.body).format;
    res.setHeader('Content-Type', contentTypes[format]);
    if (transcript.language) res.setHeader('Content-Language', transcript.language);
    res.send(render(transcript, format));
  });
  return router;
}
