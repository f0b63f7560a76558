import type { Request, RequestHandler } from 'express';
import multer, { MulterError, type StorageEngine } from 'multer';
import { SwitchboardError } from '@switchboard/errors';
import { newJobId } from '@switchboard/jobs';
import { hasBody, jsonBody } from '../http/json-body.js';
import { fromMulterError, type MulterErrorWording } from '../http/multer-errors.js';
import type { RouteDeps } from '../http/route.js';
import { JobMedia } from './job-media.js';
import type { MediaField } from './request.js';
import type { MediaSet } from './submission.js';

/** A job's request: its media, stored under a job id made before any byte of the body is read. */
type JobRequest = Request & { media?: JobMedia; stored?: MediaSet };

/** How one route's form reads: its file parts and limits, and how its refusals are worded. */
export interface JobForm {
  /** The file parts, each the medium it fills. */
  readonly fileParts: Readonly<Record<string, MediaField>>;
  /** multer's limits besides the file size (the key's tier's upload limit). */
  limits(deps: RouteDeps): { files: number; fields: number; fieldSize: number; parts: number };
  readonly wording: MulterErrorWording;
  /** The 415 message for a body that is neither JSON nor a form. */
  readonly unsupported: string;
  /** Refuse a form whose declared length is certainly over the limit before reading it. */
  readonly refuseDeclaredOversize?: boolean;
  /** Checks made before the body is read (request headers). */
  check?(req: Request): void;
}

/**
 * A storage engine for a job's form: each file part is streamed into the request's JobMedia as it
 * arrives — checked by its first bytes, hashed, counted against the tier's limit. Form parts
 * arrive in any order.
 */
function fileParts(fieldOf: Readonly<Record<string, MediaField>>): StorageEngine {
  return {
    _handleFile(req, file, done) {
      const request = req as JobRequest;
      const field = fieldOf[file.fieldname]!;
      request.media!.fromStream(field, file.stream).then(
        (media) => {
          (request.stored ??= {})[field] = media;
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

/**
 * Reads a job's body, JSON or a multipart form, within the key's tier's upload limit. The job id
 * and a place for its media are made first, so file parts are stored while they stream in; a form
 * cut short keeps none of the parts already stored.
 */
export function jobUpload(form: JobForm): (deps: RouteDeps) => RequestHandler {
  return (deps) => {
    const { tiers } = deps.config;
    const json = jsonBody(deps.config.http.jsonBodyLimitBytes);
    const parsers = new Map(
      Object.entries(tiers).map(([tier, policy]) => [
        tier,
        multer({
          storage: fileParts(form.fileParts),
          limits: { fileSize: policy.upload_limit_bytes, ...form.limits(deps) },
        }).fields(Object.keys(form.fileParts).map((name) => ({ name, maxCount: 1 }))),
      ]),
    );
    return (req, res, next) => {
      const key = res.locals.ctx.key;
      if (!key) {
        next(new SwitchboardError('unauthorized'));
        return;
      }
      const limit = tiers[key.tier].upload_limit_bytes;
      const media = new JobMedia(deps.objects, newJobId(), key.id, limit);
      (req as JobRequest).media = media;
      try {
        form.check?.(req);
      } catch (error) {
        next(error);
        return;
      }
      if (req.is('multipart/form-data')) {
        if (form.refuseDeclaredOversize && Number(req.get('content-length') ?? 0) > limit + 64 * 1024) {
          const [firstPart] = Object.keys(form.fileParts);
          next(fromMulterError(new MulterError('LIMIT_FILE_SIZE', firstPart), form.wording));
          return;
        }
        parsers.get(key.tier)!(req, res, (error?: unknown) => {
          if (error === undefined) {
            next();
            return;
          }
          void media.discard().finally(() => next(fromMulterError(error, form.wording)));
        });
        return;
      }
      if (hasBody(req.headers) && !req.is('application/json') && !req.is('application/*+json')) {
        next(new SwitchboardError('unsupported_media_type', { message: form.unsupported }));
        return;
      }
      json(req, res, next);
    };
  };
}

/**
 * Runs `work` with the request's job media and the file parts already stored; whatever fails,
 * the media stored for the job are discarded before the error goes on.
 */
export async function withJobMedia<T>(
  req: Request,
  work: (media: JobMedia, stored: MediaSet) => Promise<T>,
): Promise<T> {
  const { media, stored } = req as JobRequest;
  try {
    return await work(media!, { ...stored });
  } catch (error) {
    await media!.discard();
    throw error;
  }
}
