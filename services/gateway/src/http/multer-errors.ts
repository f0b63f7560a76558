import { MulterError } from 'multer';
import { SwitchboardError } from '@switchboard/errors';

/** How one route words multer's errors for its own form. */
export interface MulterErrorWording {
  /** Over the tier's limit (413): what is too large, and the field to name (default: multer's). */
  readonly tooLarge: { readonly message: string; readonly param?: string };
  /** A file part where the form takes none (400): which file parts it does take. */
  readonly unexpectedFile?: (field: string) => string;
  /** The word in "Malformed <what>: …" for anything else malformed (400). */
  readonly malformed: 'form' | 'upload';
}

/** multer's errors in our codes: over the tier's limit is 413, anything malformed is 400. */
export function fromMulterError(error: unknown, wording: MulterErrorWording): unknown {
  if (!(error instanceof MulterError)) return error;
  if (error.code === 'LIMIT_FILE_SIZE') {
    return new SwitchboardError('payload_too_large', {
      message: wording.tooLarge.message,
      param: wording.tooLarge.param ?? error.field,
    });
  }
  const unexpected = error.code === 'LIMIT_UNEXPECTED_FILE' ? wording.unexpectedFile : undefined;
  return new SwitchboardError('invalid_request', {
    message: unexpected
      ? unexpected(error.field ?? 'file')
      : `Malformed ${wording.malformed}: ${error.message}.`,
    param: error.field,
  });
}
