import { pipeline } from 'node:stream/promises';
import type { Router } from 'express';
import { type Request, type Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import {
  InvalidObjectKeyError,
  OWNER_KEY_ID_METADATA,
  type ObjectStore,
  type StoredObject,
} from '@switchboard/objectstore';
import { exactRouter } from '../http/router.js';
import { isSessionId } from './session-id.js';

const IMAGE_FILE = /^img-([A-Za-z0-9-]{1,64})\.png$/;
const VIDEO_FILE = /^job-([A-Za-z0-9-]{1,64})\.mp4$/;
const CAPTURE_FILE = /^capture-\d{13,20}\.png$/;

/** Stored files never change under a name (ids and capture times are unique). */
export const storedFileCacheControl = 'private, max-age=3600';

const notFound = () => new SwitchboardError('not_found');

/**
 * The object key for a request, or a 404 before storage is touched. Express has already
 * percent-decoded the parameters, so `..%2F` or `%2e%2e` arrive as `../` and `..` and fail the
 * anchored patterns like any other malformed name.
 */
function imageKey(file: string): string {
  const match = IMAGE_FILE.exec(file);
  if (!match) throw notFound();
  return `images/img-${match[1]}.png`;
}

function videoKey(file: string): string {
  const match = VIDEO_FILE.exec(file);
  if (!match) throw notFound();
  return `videos/job-${match[1]}.mp4`;
}

function screenshotKey(sessionId: string, file: string): string {
  if (!isSessionId(sessionId) || !CAPTURE_FILE.test(file)) throw notFound();
  return `screenshots/${sessionId}/${file}`;
}

async function open(store: ObjectStore, key: string): Promise<StoredObject | null> {
  try {
    return await store.get(key);
  } catch (error) {
    if (error instanceof InvalidObjectKeyError) throw notFound();
    // The cause (with any bucket name) goes to the log through the error handler, not the client.
    throw new SwitchboardError('unavailable', { message: 'The file store is unavailable.', cause: error });
  }
}

/** Streams the object to its owner; anyone else gets exactly what a missing object gets. */
async function serve(store: ObjectStore, key: string, res: Response): Promise<void> {
  const caller = res.locals.ctx.key;
  if (!caller) throw new SwitchboardError('unauthorized');
  const object = await open(store, key);
  if (!object) throw notFound();
  if (object.metadata[OWNER_KEY_ID_METADATA] !== caller.id) {
    object.stream.destroy();
    throw notFound();
  }
  res.status(200);
  res.setHeader('Content-Type', object.contentType);
  res.setHeader('Content-Length', String(object.size));
  res.setHeader('Cache-Control', storedFileCacheControl);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  try {
    await pipeline(object.stream, res);
  } catch (error) {
    // A client that went away, or a store that failed mid-body: the status is sent, so cut it.
    res.locals.ctx.logger.debug({ err: error }, 'stored file stream ended early');
    res.destroy();
  }
}

const param = (req: Request, name: string): string => {
  const value = (req.params as Record<string, string | undefined>)[name];
  return typeof value === 'string' ? value : '';
};

/** GET of generated images, videos and screenshots from the object store (API.md §4, §5, §6). */
export function storedFilesRouter(store: ObjectStore): Router {
  const router = exactRouter();
  router.get('/api/images/:file', async (req, res) => {
    await serve(store, imageKey(param(req, 'file')), res);
  });
  router.get('/api/videos/:file', async (req, res) => {
    await serve(store, videoKey(param(req, 'file')), res);
  });
  router.get('/api/browser/screenshots/:sessionId/:file', async (req, res) => {
    await serve(store, screenshotKey(param(req, 'sessionId'), param(req, 'file')), res);
  });
  return router;
}
