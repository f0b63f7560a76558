import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import type { JobMedia, StoredMedia } from './job-media.js';
import type { MediaField } from './request.js';

/**
 * A multer storage engine for a job's form: each file part is streamed into the request's
 * JobMedia (`req.media`) as it arrives — checked by its first bytes, hashed, counted against the
 * tier's limit — and the stored medium is handed to `keep`. Form parts arrive in any order.
 */
export function fileParts(
  fieldOf: (fieldname: string) => MediaField,
  keep: (req: Request, field: MediaField, media: StoredMedia) => void,
): StorageEngine {
  return {
    _handleFile(req, file, done) {
      const field = fieldOf(file.fieldname);
      (req as Request & { media?: JobMedia }).media!.fromStream(field, file.stream).then(
        (media) => {
          keep(req, field, media);
          done(null, {});
        },
        (error: unknown) => {
          file.stream.resume(); // let the parser finish reading the form
          done(error);
        },
      );
    },
    _removeFile(_req, _file, done) {
      done(null);
    },
  };
}
