import { pipeline } from 'node:stream/promises';
import { type Request, type Response } from 'express';
import { dependencyUnavailable, SwitchboardError } from '@switchboard/errors';
import {
  InvalidObjectKeyError,
  OWNER_KEY_ID_METADATA,
  videoKeyOfFile,
  type ByteRange,
  type ObjectInfo,
  type ObjectStore,
  type StoredObject,
} from '@switchboard/objectstore';
import { sendRangeNotSatisfiable } from './errors.js';

/** Stored files never change under a name (ids and capture times are unique). */
export const storedFileCacheControl = 'private, max-age=3600';

const notFound = () => new SwitchboardError('not_found');

/**
 * The object key for a request (the layout's parsers), or a 404 before storage is touched.
 * Express has already percent-decoded the parameters, so `..%2F` or `%2e%2e` arrive as `../` and
 * `..` and fail the anchored patterns like any other malformed name.
 */
export function keyOr404(key: string | null | undefined): string {
  if (!key) throw notFound();
  return key;
}

/**
 * What a `Range` header asks of an object of `size` bytes (RFC 9110 §14): `null` to send the
 * whole object with 200, `'unsatisfiable'` for 416, or the bytes for 206. Only one range is
 * served: a header that is malformed, names another unit or lists several ranges is ignored
 * (the whole file, which the RFC allows and every player copes with), so no multipart bodies.
 */
export function requestedRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const match = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header);
  if (!match) return null;
  const [first, last] = [match[1]!, match[2]!];
  if (first === '') {
    if (last === '') return null; // `bytes=-`
    // The last n bytes; a zero-length suffix, or any range of an empty file, selects nothing.
    const length = Math.min(Number(last), size);
    return length === 0 ? 'unsatisfiable' : { start: size - length, end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return null; // not a valid range at all: ignored, not refused
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/** Store failures become 503 (the cause, with any bucket name, goes to the log only). */
async function fromStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof InvalidObjectKeyError) throw notFound();
    throw dependencyUnavailable('The file store is unavailable.', error);
  }
}

/** The caller owns it, or it is answered exactly as a missing object. */
function checkOwner(info: ObjectInfo | null, res: Response): asserts info is ObjectInfo {
  const caller = res.locals.ctx.key;
  if (!caller) throw new SwitchboardError('unauthorized');
  if (!info || info.metadata[OWNER_KEY_ID_METADATA] !== caller.id) throw notFound();
}

function setFileHeaders(res: Response, object: StoredObject, length: number): void {
  res.setHeader('Content-Type', object.contentType);
  res.setHeader('Content-Length', String(length));
  res.setHeader('Cache-Control', storedFileCacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Accept-Ranges', 'bytes');
}

async function send(object: StoredObject, res: Response): Promise<void> {
  try {
    await pipeline(object.stream, res);
  } catch (error) {
    // A client that went away, or a store that failed mid-body: the status is sent, so cut it.
    res.locals.ctx.logger.debug({ err: error }, 'stored file stream ended early');
    res.destroy();
  }
}

/** The whole object, in one read of the store. */
async function serveWhole(store: ObjectStore, key: string, res: Response): Promise<void> {
  const object = await fromStore(() => store.get(key));
  try {
    checkOwner(object, res);
  } catch (error) {
    object?.stream.destroy();
    throw error;
  }
  res.status(200);
  setFileHeaders(res, object, object.size);
  await send(object, res);
}

/**
 * A `Range` request: the description first (owner and size, without reading the body), then
 * only the asked bytes, so seeking in a long video reads a little of it, not all of it.
 */
async function serveRange(store: ObjectStore, key: string, header: string, res: Response): Promise<void> {
  const info = await fromStore(() => store.stat(key));
  checkOwner(info, res);
  const range = requestedRange(header, info.size);
  if (range === null) return serveWhole(store, key, res);
  if (range === 'unsatisfiable') {
    sendRangeNotSatisfiable(res, info.size);
    return;
  }
  const object = await fromStore(() => store.get(key, { range }));
  // Gone since the stat (stored files are never replaced under a name, only expire).
  if (!object) throw notFound();
  // The store names the bytes it actually carries (a server may have cut or ignored the range).
  const carried = object.range ?? { start: 0, end: object.size - 1 };
  res.status(206);
  setFileHeaders(res, object, carried.end - carried.start + 1);
  res.setHeader('Content-Range', `bytes ${carried.start}-${carried.end}/${object.size}`);
  await send(object, res);
}

/**
 * Streams a stored file to its owner; anyone else gets exactly what a missing object gets. A
 * single `Range` gets 206; an `If-Range` is never matched (no validators are sent), so the RFC
 * has the whole file sent instead.
 */
export async function serveStoredFile(
  store: ObjectStore,
  key: string,
  req: Request,
  res: Response,
): Promise<void> {
  const range = req.get('range');
  if (range === undefined || req.get('if-range') !== undefined) return serveWhole(store, key, res);
  return serveRange(store, key, range, res);
}

/** The MP4 of an animation job, as GET /api/videos/<job_id>.mp4 serves it (also /v1/videos/{id}/content). */
export async function serveJobVideo(
  store: ObjectStore,
  jobId: string,
  req: Request,
  res: Response,
): Promise<void> {
  await serveStoredFile(store, keyOr404(videoKeyOfFile(`${jobId}.mp4`)?.key), req, res);
}
