/**
 * The gateway's two web pages (/docs and /admin) and the files they load: pages from the
 * gateway's own public/ folder, libraries from node_modules. Every file is resolved when its route
 * is declared, so a missing one stops the gateway at start-up instead of a page that fails in
 * a browser. Only the files named here are served: no directory is exposed.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NextFunction, RequestHandler, Response } from 'express';
import { SwitchboardError } from '@switchboard/errors';
import { z } from 'zod';
import { staticFileRefusals } from '../contract/responses.js';
import { sendError, sendRangeNotSatisfiable } from './errors.js';
import { route, type Route, type Tag } from './route.js';

// Compiled to dist/http/: public/ sits next to dist/ in the package (and in the deployed image).
const publicDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'public');
const require = createRequire(import.meta.url);

/** A file under services/gateway/public. */
export function publicFile(relativePath: string): string {
  const path = join(publicDir, relativePath);
  if (!existsSync(path)) throw new Error(`The gateway's ${relativePath} is missing (expected at ${path}).`);
  return path;
}

/** A file of a dependency, by a specifier its package exports. */
export function dependencyFile(specifier: string): string {
  return require.resolve(specifier);
}

/**
 * The browser build of a package whose exports give Node another file for the same specifier
 * (lit-html's Node entry is its server-rendering build): the `browser` condition of its "."
 * export, read from its package.json.
 */
export function browserEntry(packageName: string): string {
  let dir = dirname(require.resolve(packageName));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name?: string;
        exports?: Record<string, { browser?: { default?: string } }>;
      };
      if (pkg.name === packageName) {
        const file = pkg.exports?.['.']?.browser?.default;
        if (!file) throw new Error(`${packageName} exports no browser build.`);
        return join(dir, file);
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json of ${packageName} found.`);
    dir = parent;
  }
}

/**
 * A Content-Security-Policy: nothing unless listed. `default-src 'none'` means a directive left
 * out (frames, objects, media, manifests…) allows nothing at all.
 */
export function contentSecurityPolicy(directives: Record<string, string>): string {
  const all: Record<string, string> = {
    'default-src': "'none'",
    'base-uri': "'none'",
    'form-action': "'none'",
    'frame-ancestors': "'none'",
    ...directives,
  };
  return Object.entries(all)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

/**
 * What send() reports once the file could not be sent. Its refusals of the request's own headers
 * are the client's mistake, answered with the JSON error: a `Range` that selects no byte of the
 * file (416), or an `If-Match` / `If-Unmodified-Since` the file does not meet (412). Anything else
 * goes to the error handler. send() has already described the file (ETag, Last-Modified), which
 * an error body must not carry.
 */
function sendFileFailed(file: string, res: Response, next: NextFunction) {
  return (error: unknown) => {
    if (!error) return;
    const status = (error as { status?: unknown }).status;
    if ((status === 416 || status === 412) && !res.headersSent) {
      res.removeHeader('ETag');
      res.removeHeader('Last-Modified');
      if (status === 416) {
        sendRangeNotSatisfiable(res, statSync(file).size);
      } else {
        const message = 'The file does not meet the If-Match or If-Unmodified-Since precondition.';
        sendError(res, new SwitchboardError('invalid_request', { message }), 412);
      }
      return;
    }
    next(error);
  };
}

/** An HTML page under its policy. Revalidated on every load (no-cache), so an upgrade shows at once. */
export function page(file: string, policy: string): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(
      file,
      { headers: { 'Content-Type': 'text/html; charset=utf-8' } },
      sendFileFailed(file, res, next),
    );
  };
}

/** A script or style sheet a page loads; revalidated (Last-Modified, ETag) so a new version is picked up. */
export function asset(file: string): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-cache');
    // dotfiles: pnpm keeps packages under node_modules/.pnpm, which send() would refuse; the path
    // is one named in code, never taken from the request.
    res.sendFile(file, { dotfiles: 'allow' }, sendFileFailed(file, res, next));
  };
}

const fileKinds = {
  page: { type: 'text/html; charset=utf-8', answer: 'The page.' },
  script: { type: 'text/javascript', answer: 'The file.' },
  style: { type: 'text/css', answer: 'The file.' },
};

/** A public page, or a file one loads, declared like any route: `serves` answers it. */
export function staticFileRoute(file: {
  path: string;
  operationId: string;
  tag: Tag;
  kind: keyof typeof fileKinds;
  summary: string;
  description?: string;
  serves: RequestHandler;
}): Route {
  const { type, answer } = fileKinds[file.kind];
  return route({
    method: 'get',
    path: file.path,
    operationId: file.operationId,
    tag: file.tag,
    auth: 'public',
    summary: file.summary,
    ...(file.description === undefined ? {} : { description: file.description }),
    responses: {
      200: { description: answer, content: { [type]: { schema: z.string() } } },
      ...staticFileRefusals(),
    },
    errors: [],
    serve: ({ req, res }, next) => file.serves(req, res, next),
  });
}
