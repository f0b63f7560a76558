import type { Router } from 'express';
import type { TierPolicies } from '@switchboard/keys';
import type { WhisperWorker } from '../clients/whisper.js';
import { TranscriptionFields } from '../contract/openai.js';
import { exactRouter } from '../http/router.js';
import { validate } from '../http/validate.js';
import { transcriptionUpload } from '../routes/transcription-upload.js';
import { contentTypes, render, type Transcript } from '../transcripts/format.js';

function readFields(body: unknown) {
  return validate(TranscriptionFields, body ?? {});
}

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
export function transcriptionsRouter(whisper: WhisperWorker, tiers: TierPolicies): Router {
  const router = exactRouter();
  const upload = transcriptionUpload(whisper, tiers, (body) => {
    const fields = readFields(body);
    return { language: fields.language ?? '', model: fields.model ?? '', format: 'json' };
  });
  router.post('/audio/transcriptions', upload.receive, async (req, res) => {
    const transcript = await upload.finish(req);
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
  });
  return router;
}
