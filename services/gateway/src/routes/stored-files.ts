// GET of generated images, videos (and their posters), screenshots and PDFs from the object store,
// each to the key that owns it.
import type { Request } from 'express';
import { imageKeyOfFile, pdfKeyOfFile, screenshotKeyOfFile, videoKeyOfFile } from '@switchboard/objectstore';
import { sessionId, sessionSurface } from '../contract/browser-sessions.js';
import { z } from 'zod';
import { headerRef, keyErrors, rangeNotSatisfiable, workerErrors } from '../contract/responses.js';
import { jobId } from '../contract/animation.js';
import { route } from '../http/route.js';
import { keyOr404, serveStoredFile } from '../http/stored-file.js';
import { isSessionId } from '../sessions/session-id.js';

/** A path parameter as Express decoded it. */
const param = (req: Request, name: string): string => {
  const value = (req.params as Record<string, string | undefined>)[name];
  return typeof value === 'string' ? value : '';
};

export const getImageRoute = route({
  method: 'get',
  path: '/api/images/{id}.png',
  operationId: 'getImage',
  tag: 'Images',
  auth: 'apiKey',
  summary: 'Download a generated image',
  description: 'The PNG, exactly `width`×`height`, to the key that generated it; any other key gets 404.',
  params: z.object({ id: z.string().regex(/^img-/).meta({ description: 'The image id (`img-…`).' }) }),
  responses: {
    200: {
      description: 'The PNG.',
      content: { 'image/png': { schema: z.string().meta({ contentMediaType: 'image/png' }) } },
    },
  },
  errors: [...keyErrors, 'not_found', ...workerErrors],
  serve: ({ req, res, deps }) =>
    serveStoredFile(deps.objects, keyOr404(imageKeyOfFile(`${param(req, 'id')}.png`)), req, res),
});

export const getBrowserScreenshotRoute = route({
  method: 'get',
  path: '/api/browser/screenshots/{session_id}/{filename}',
  operationId: 'getBrowserScreenshot',
  ...sessionSurface,
  summary: 'Download a screenshot',
  description: 'To the key that owns the session, also after the session ended.',
  params: z.object({ session_id: sessionId, filename: z.string().regex(/^capture-[0-9]+\.png$/) }),
  responses: {
    200: {
      description: 'The PNG.',
      content: { 'image/png': { schema: z.string().meta({ contentMediaType: 'image/png' }) } },
    },
  },
  errors: [...keyErrors, 'session_not_found', 'not_found', ...workerErrors],
  async serve({ req, res, deps }) {
    const session = param(req, 'session_id');
    const key = isSessionId(session) ? screenshotKeyOfFile(session, param(req, 'filename')) : null;
    await serveStoredFile(deps.objects, keyOr404(key), req, res);
  },
});

export const getBrowserPdfRoute = route({
  method: 'get',
  path: '/api/browser/pdfs/{session_id}/{filename}',
  operationId: 'getBrowserPdf',
  ...sessionSurface,
  summary: 'Download a PDF',
  description: 'To the key that owns the session, also after the session ended; any other key gets 404.',
  params: z.object({ session_id: sessionId, filename: z.string().regex(/^page-[0-9]+\.pdf$/) }),
  responses: {
    200: {
      description: 'The PDF.',
      content: { 'application/pdf': { schema: z.string().meta({ contentMediaType: 'application/pdf' }) } },
    },
  },
  errors: [...keyErrors, 'session_not_found', 'not_found', ...workerErrors],
  async serve({ req, res, deps }) {
    const session = param(req, 'session_id');
    const key = isSessionId(session) ? pdfKeyOfFile(session, param(req, 'filename')) : null;
    await serveStoredFile(deps.objects, keyOr404(key), req, res);
  },
});

/** The MP4 and its poster: another key's file is answered exactly as a missing one. */
function videoFileRoute(kind: 'mp4' | 'jpg') {
  const mp4 = kind === 'mp4';
  const type = mp4 ? 'video/mp4' : 'image/jpeg';
  const content = { [type]: { schema: z.string().meta({ contentMediaType: type }) } };
  const acceptRanges = { 'Accept-Ranges': headerRef('Accept-Ranges') };
  return route({
    method: 'get',
    path: `/api/videos/{job_id}.${kind}`,
    operationId: mp4 ? 'getAnimationVideo' : 'getAnimationPoster',
    tag: 'Animation',
    auth: 'apiKey',
    summary: mp4 ? 'Download the video of a job' : 'Download the poster frame of a job',
    description: `${
      mp4
        ? 'The H.264 MP4 of a job that succeeded, to the key that created it.'
        : 'A JPEG still of the video of a job that succeeded, to the key that created it.'
    } Any other key gets 404, exactly as for a missing file. One byte range (\`Range: bytes=a-b\`, \`bytes=a-\` or \`bytes=-n\`) is answered with 206 and only those bytes, so players can seek; a header listing several ranges, or one that is not a valid byte range, gets the whole file (200); a range starting past the end gets 416. \`If-Range\` always gets the whole file (no validators are sent).`,
    params: z.object({ job_id: jobId.meta({ description: 'The job id (`job-…`).' }) }),
    headers: z.object({
      Range: z
        .string()
        .optional()
        .meta({ description: 'One byte range, e.g. `bytes=0-1048575`, `bytes=1048576-` or `bytes=-4096`.' }),
    }),
    responses: {
      200: { description: mp4 ? 'The MP4.' : 'The JPEG.', content, headers: acceptRanges },
      206: {
        description: 'The asked bytes.',
        content,
        headers: { ...acceptRanges, 'Content-Range': headerRef('Content-Range') },
      },
      416: rangeNotSatisfiable(),
    },
    errors: [...keyErrors, 'not_found', 'unavailable'],
    serve: ({ req, res, deps }) =>
      serveStoredFile(
        deps.objects,
        keyOr404(videoKeyOfFile(`${param(req, 'job_id')}.${kind}`)?.key),
        req,
        res,
      ),
  });
}

export const videoFileRoutes = [videoFileRoute('mp4'), videoFileRoute('jpg')];
