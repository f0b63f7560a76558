/**
 * One declaration per route: its path and method, what it reads (params, query, headers, body),
 * what it answers, who may call it (auth, minimum tier), how its errors are worded, whether it
 * holds a model call — and its handler. The Express registration (mountRoutes), request
 * validation, the tier gate, the model-call hold, the error dialect and the OpenAPI document
 * (contract/document.ts) are all read from it, so none of them can drift from the others.
 */
import type { ZodRequestBody } from '@asteasolutions/zod-to-openapi';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { ErrorCode } from '@switchboard/errors';
import type { Tier } from '@switchboard/keys';
import type { z } from 'zod';
import type { Auth, SuccessResponse } from '../contract/responses.js';
import type { GatewayDeps } from '../server.js';
import { jsonBody } from './json-body.js';
import { exactRouter } from './router.js';
import { validate } from './validate.js';

export type Tag =
  | 'Language model'
  | 'Transcription'
  | 'Images'
  | 'Animation'
  | 'Browser sessions'
  | 'Administration'
  | 'Usage'
  | 'Webhooks'
  | 'Operations'
  | 'OpenAI-compatible';

export type ModelCapability = 'llm' | 'whisper' | 'diffusion';

/** What a route handler may use: the app's dependencies, and where clients reach the gateway. */
export interface RouteDeps extends GatewayDeps {
  originOf(req: Request): string;
  /** The OpenAPI document, as served at /openapi.json. */
  openApiJson: string;
}

type ObjectSchema = z.ZodObject | z.ZodPipe;

/** A body documented by its content map: other media types (multipart), read by `receive`. */
type BodyContent = ZodRequestBody;

/**
 * Success responses by status; their X-Request-Id and rate-limit headers are added to the document
 * unless the response is not the gateway's own (`gatewayHeaders: false`: a relayed WebSocket upgrade).
 */
export type Responses = Record<number, SuccessResponse & { gatewayHeaders?: false }>;

/** The JSON body of a declared response, as the handler may write it. */
type JsonAnswer<R> = {
  [S in keyof R]: R[S] extends { content: { 'application/json': { schema: infer T } } }
    ? T extends z.ZodType
      ? z.input<T>
      : never
    : never;
}[keyof R];

/**
 * One request to a declared route: `query` is validated before the handler runs, `body` when the
 * handler first reads it (so a path parameter it checks first keeps its own answer); either is a 400.
 */
export interface RouteCall<Q = z.ZodType, B = z.ZodType> {
  readonly req: Request;
  readonly res: Response;
  readonly deps: RouteDeps;
  readonly query: Q extends z.ZodType ? z.output<Q> : undefined;
  readonly body: B extends z.ZodType ? z.output<B> : unknown;
}

interface Declaration<Q, B> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The path as served, in OpenAPI form: `/admin/api/keys/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: Tag;
  auth: Auth;
  /** `openai`: errors come in OpenAI's body; otherwise in the gateway's own. */
  errorDialect?: 'openai';
  /** The lowest tier whose keys may call it; lower ones get `403 tier_required` before the rate limit. */
  tier?: Tier;
  /**
   * The capability whose calls this route makes: each request holds one of the key's tier's
   * "model calls at once" for it while it runs (auth/model-calls.ts), or is refused with
   * `429 concurrency_limit`.
   */
  modelCalls?: ModelCapability;
  params?: ObjectSchema;
  query?: Q;
  /** Request headers the operation reads (beyond Authorization and X-Request-Id). */
  headers?: z.ZodObject;
  /** A JSON body, read within the JSON body limit and validated; or another body's content map. */
  body?: B;
  /** The JSON body may be left out (it then reads as `{}`). */
  bodyOptional?: true;
  /** Reads a body that is not plain JSON (multipart uploads), or JSON the handler checks itself. */
  receive?: (deps: RouteDeps) => RequestHandler;
  /** Every error code the route can answer with; grouped by their status from the error table. */
  errors: readonly ErrorCode[];
}

/** A route whose handler returns its one JSON answer, typed by the declared response schema. */
interface JsonRoute<R extends Responses, Q, B> extends Declaration<Q, B> {
  responses: R;
  handle(call: RouteCall<Q, B>): Promise<JsonAnswer<R>> | JsonAnswer<R>;
  serve?: never;
}

/** A route that writes its own response: streams, files, pages, uploads, WebSocket upgrades. */
interface RawRoute<R extends Responses, Q, B> extends Declaration<Q, B> {
  responses: R;
  serve(call: RouteCall<Q, B>, next: NextFunction): unknown;
  handle?: never;
}

/** A declared route, its types erased: what the app, the gates and the document read. */
export interface Route extends Declaration<ObjectSchema, z.ZodType | BodyContent> {
  responses: Responses;
  handle?(call: RouteCall): unknown;
  serve?(call: RouteCall, next: NextFunction): unknown;
}

/** Declares a route; a JSON handler's answer is checked against its declared response schema. */
export function route<
  const R extends Responses,
  Q extends ObjectSchema | undefined = undefined,
  B extends z.ZodType | BodyContent | undefined = undefined,
>(declaration: JsonRoute<R, Q, B> | RawRoute<R, Q, B>): Route {
  return declaration as unknown as Route;
}

export function isZodType(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/** JSON bodies within the configured limit: another content type is 415, a larger body 413. */
export const readJson = (deps: RouteDeps): RequestHandler => jsonBody(deps.config.http.jsonBodyLimitBytes);

/** State a route builds once per app from its dependencies (caches, upload parsers, a proxy). */
export function perApp<T>(build: (deps: RouteDeps) => T): (deps: RouteDeps) => T {
  const built = new WeakMap<RouteDeps, T>();
  return (deps) => {
    if (!built.has(deps)) built.set(deps, build(deps));
    return built.get(deps)!;
  };
}

function callOf(route: Route, req: Request, res: Response, deps: RouteDeps): RouteCall {
  const bodySchema = isZodType(route.body) ? route.body : undefined;
  // Express gives repeated parameters as arrays; the schema then refuses them as the wrong type.
  const query = route.query
    ? validate(route.query, { ...(req.query as Record<string, unknown>) })
    : undefined;
  return {
    req,
    res,
    deps,
    query,
    get body(): unknown {
      return bodySchema ? validate(bodySchema, req.body) : (req.body as unknown);
    },
  };
}

/** The Express form of a declared path: `/keys/{id}` → `/keys/:id`. */
const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Registers each route with its body reader and handler; JSON answers get the declared status. */
export function mountRoutes(routes: readonly Route[], deps: RouteDeps): Router {
  const router = exactRouter();
  for (const route of routes) {
    const reader = route.receive ?? (isZodType(route.body) ? readJson : undefined);
    const readers = reader ? [reader(deps)] : [];
    const status = Number(Object.keys(route.responses)[0]);
    // The gates before the routes (tier, model calls, error dialect) read the declaration the route
    // table matched; a request Express routed here that the table did not match would have passed
    // them unchecked, so it goes no further.
    const matched: RequestHandler = (req, res, next) => {
      next(
        res.locals.route === route
          ? undefined
          : new Error(`${req.method} ${req.path} not matched to ${route.path}`),
      );
    };
    router[route.method](expressPath(route.path), matched, ...readers, async (req, res, next) => {
      const call = callOf(route, req, res, deps);
      if (route.serve) {
        await route.serve(call, next);
        return;
      }
      const answer = await route.handle!(call);
      res.status(status).json(answer);
    });
  }
  return router;
}

/** Finds the declared route a request is for (a HEAD reads its GET), matching as Express does. */
export class RouteTable {
  private readonly entries: { method: string; pattern: RegExp; route: Route }[];

  constructor(routes: readonly Route[]) {
    this.entries = routes.map((route) => ({
      method: route.method.toUpperCase(),
      pattern: new RegExp(
        `^${route.path
          .split(/\{\w+\}/)
          .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}$`,
      ),
      route,
    }));
  }

  match(method: string, path: string): Route | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    return this.entries.find((entry) => entry.method === wanted && entry.pattern.test(path))?.route;
  }

  /** Sets `res.locals.route` for the policies that read it (tier, model calls, error dialect). */
  matcher(): RequestHandler {
    return (req, res, next) => {
      res.locals.route = this.match(req.method, req.path);
      next();
    };
  }
}

declare module 'express-serve-static-core' {
  interface Locals {
    /** The declared route the request is for; undefined when none is (a 404 to be). */
    route?: Route;
  }
}
