import type { Router } from 'express';
import { type Request, type RequestHandler } from 'express';
import multer, { MulterError, type StorageEngine } from 'multer';
import { SwitchboardError } from '@switchboard/errors';
import { exactRouter } from '../http/router.js';
import { callContext } from '../clients/call-context.js';
import type { TranscriptionUpload, WhisperWorker } from '../clients/whisper.js';
import type { TierPolicies } from '@switchboard/keys';
import { contentTypes, render, type TranscriptFormat } from '../transcripts/format.js';
import { TranscribeFields } from '../contract/transcription.js';
import { validate } from '../http/validate.js';

interface UploadFields {
  language: string;
  format: TranscriptFormat;
}

/** Validates the text parts seen so far; called again once the whole form is read. */
function readFields(body: unknown): UploadFields {
  const fields = validate(TranscribeFields, body ?? {});
  return { language: fields.language ?? '', format: fields.format };
}

type UploadRequest = Request & { upload?: TranscriptionUpload; uploadFields?: UploadFields };

/**
 * A multer storage engine that stores nothing: it relays the file's bytes to the worker's
 * client stream as they arrive, with backpressure, so no upload is ever held in memory or on disk.
 */
function relayToWhisper(whisper: WhisperWorker): StorageEngine {
  return {
    _handleFile(req, file, done) {
      const request = req as UploadRequest;
      void (async () => {
        const fields = readFields(request.body);
        const upload = whisper.transcribe(callContext(request.res!));
        request.upload = upload;
        request.uploadFields = fields;
        request.res!.on('close', () => upload.cancel());
        await upload.send({
          options: {
            language: fields.language,
            format: fields.format,
            declared_size: '0',
            model: '',
            filename: file.originalname,
            content_type: file.mimetype,
          },
        });
        for await (const data of file.stream) await upload.send({ data: data as Buffer });
      })().then(
        () => done(null, {}),
        (error: unknown) => {
          file.stream.resume(); // let multer finish reading the form
          done(error);
        },
      );
    },
    _removeFile(req, _file, done) {
      (req as UploadRequest).upload?.cancel();
      done(null);
    },
  };
}

/** multer's errors in our codes: over the tier's limit is 413, anything malformed is 400. */
function fromMulterError(error: unknown): unknown {
  if (!(error instanceof MulterError)) return error;
  if (error.code === 'LIMIT_FILE_SIZE') {
    return new SwitchboardError('payload_too_large', {
      message: "The file is larger than the key's tier allows.",
      param: 'file',
    });
  }
  return new SwitchboardError('invalid_request', {
    message: `Malformed upload: ${error.message}.`,
    param: error.field,
  });
}

/** POST /transcribe (API.md §3), streamed from the client through the gateway to the worker. */
export function transcribeRouter(whisper: WhisperWorker, tiers: TierPolicies): Router {
  const router = exactRouter();
  const storage = relayToWhisper(whisper);
  const parsers = new Map(
    Object.entries(tiers).map(([tier, policy]) => [
      tier,
      {
        limit: policy.upload_limit_bytes,
        parse: multer({
          storage,
          limits: { fileSize: policy.upload_limit_bytes, files: 1, fields: 8, fieldSize: 1024 },
        }).single('file'),
      },
    ]),
  );

  const receive: RequestHandler = (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      next(
        new SwitchboardError('unsupported_media_type', {
          message: 'Send the upload as multipart/form-data.',
        }),
      );
      return;
    }
    const parser = parsers.get(res.locals.ctx.key?.tier ?? 'basic')!;
    // Refuse at once what is certainly too large; the streamed count catches everything else.
    const declared = Number(req.get('content-length') ?? 0);
    if (declared > parser.limit + 64 * 1024) {
      next(fromMulterError(new MulterError('LIMIT_FILE_SIZE', 'file')));
      return;
    }
    parser.parse(req, res, (error?: unknown) =>
      next(error === undefined ? undefined : fromMulterError(error)),
    );
  };

  router.post('/transcribe', receive, async (req: UploadRequest, res) => {
    const upload = req.upload;
    if (!upload || !req.uploadFields) {
      throw new SwitchboardError('invalid_request', {
        message: 'file: an audio file is required',
        param: 'file',
      });
    }
    const fields = readFields(req.body);
    if (fields.language !== req.uploadFields.language || fields.format !== req.uploadFields.format) {
      await upload.send({ options: { language: fields.language, format: fields.format } });
    }
    const transcript = await upload.finish();
    res.setHeader('Content-Type', contentTypes[fields.format]);
    if (transcript.language) res.setHeader('Content-Language', transcript.language);
    res.send(render(transcript, fields.format));
  });

  return router;
}
