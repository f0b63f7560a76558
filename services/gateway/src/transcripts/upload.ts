import type { Request, RequestHandler } from 'express';
import multer, { MulterError, type StorageEngine } from 'multer';
import type { TranscribeResponse__Output } from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { TierPolicies } from '@switchboard/keys';
import { callContext } from '../clients/call-context.js';
import type { TranscriptionUpload, WhisperWorker } from '../clients/whisper.js';
import { fromMulterError, type MulterErrorWording } from '../http/multer-errors.js';

/** What the worker is told about an upload, read from the form's text parts. */
export interface UploadOptions {
  language: string;
  format: string;
  model: string;
}

/** Validates the text parts seen so far (a 400 on a bad one); called again once the form is read. */
export type ReadUploadOptions = (body: unknown) => UploadOptions;

type UploadRequest = Request & { upload?: TranscriptionUpload; uploadOptions?: UploadOptions };

/** C0 controls and DEL: no file name has them, and NUL cuts the name short in C-based tools. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * A multer storage engine that stores nothing: it relays the file's bytes to the worker's
 * client stream as they arrive, with backpressure, so no upload is ever held in memory or on disk.
 */
function relayToWhisper(whisper: WhisperWorker, readOptions: ReadUploadOptions): StorageEngine {
  return {
    _handleFile(req, file, done) {
      const request = req as UploadRequest;
      void (async () => {
        if (CONTROL_CHARACTER.test(file.originalname)) {
          throw new SwitchboardError('invalid_request', {
            message: 'file: the file name contains a control character',
            param: 'file',
          });
        }
        const options = readOptions(request.body);
        const upload = whisper.transcribe(callContext(request.res!));
        request.upload = upload;
        request.uploadOptions = options;
        request.res!.on('close', () => upload.cancel());
        await upload.send({
          options: {
            ...options,
            declared_size: '0',
            filename: file.originalname,
            content_type: file.mimetype,
          },
        });
        for await (const data of file.stream) await upload.send({ data: data as Buffer });
      })().then(
        () => done(null, {}),
        (error: unknown) => {
          // The response may have closed (and cancelled) before this call reached the worker.
          request.upload?.cancel();
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

const uploadErrors: MulterErrorWording = {
  tooLarge: { message: "The file is larger than the key's tier allows.", param: 'file' },
  malformed: 'upload',
};

/**
 * What reading the form failed with, in our codes. multer's own errors (limits) and ours (the
 * worker's answer, a bad field, a bad file name: the relay fails only with those) keep theirs;
 * anything else is the multipart parser's, reached directly or through the file's stream (no
 * boundary, a body cut short before its closing boundary, a malformed part header): the client's
 * malformed form, not our failure, so 400 as multer's malformed-form errors are.
 */
function fromFormError(error: unknown): unknown {
  if (error instanceof MulterError || isSwitchboardError(error)) return fromMulterError(error, uploadErrors);
  return new SwitchboardError('invalid_request', {
    message: `Malformed ${uploadErrors.malformed}: ${error instanceof Error ? error.message : 'unreadable form'}.`,
  });
}

/**
 * A multipart upload whose `file` part is streamed to the whisper worker as it arrives, within
 * the key's tier's size limit: POST /transcribe and POST /v1/audio/transcriptions both use it.
 * `receive` reads the form; `finish` sends the fields that came after the file and waits for the
 * transcript.
 */
export interface TranscriptionUploadHandlers {
  receive: RequestHandler;
  finish(req: Request): Promise<TranscribeResponse__Output>;
}

export function transcriptionUpload(
  whisper: WhisperWorker,
  tiers: TierPolicies,
  readOptions: ReadUploadOptions,
): TranscriptionUploadHandlers {
  const storage = relayToWhisper(whisper, readOptions);
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
      next(fromMulterError(new MulterError('LIMIT_FILE_SIZE', 'file'), uploadErrors));
      return;
    }
    parser.parse(req, res, (error?: unknown) => next(error === undefined ? undefined : fromFormError(error)));
  };

  async function finish(req: Request): Promise<TranscribeResponse__Output> {
    const { upload, uploadOptions } = req as UploadRequest;
    if (!upload || !uploadOptions) {
      throw new SwitchboardError('invalid_request', {
        message: 'file: an audio file is required',
        param: 'file',
      });
    }
    const options = readOptions(req.body);
    if (
      options.language !== uploadOptions.language ||
      options.format !== uploadOptions.format ||
      options.model !== uploadOptions.model
    ) {
      await upload.send({ options });
    }
    return upload.finish();
  }

  return { receive, finish };
}
