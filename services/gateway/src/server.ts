import express, { type Express, type Request } from 'express';
import helmet from 'helmet';
import type { KeyStore } from '@switchboard/keys';
import type { ObjectStore } from '@switchboard/objectstore';
import type { ConcurrencyLimiter, RateLimiter } from '@switchboard/ratelimit';
import type { Logger } from '@switchboard/telemetry';
import { adminRouter } from './admin/admin-routes.js';
import { AccessCheck } from './auth/access.js';
import { AuthFailureGuard, authenticate } from './auth/authenticate.js';
import type { LiveRequests } from './auth/live-requests.js';
import { clusterAllowlist } from './auth/ip-allowlists.js';
import { holdModelCalls } from './auth/model-calls.js';
import { rateLimit } from './auth/rate-limit.js';
import { tierGate } from './auth/tiers.js';
import type { WorkerClients } from './clients/index.js';
import type { GatewayConfig } from './config.js';
import { CidrSet } from './http/client-ip.js';
import { errorHandler, notFound } from './http/errors.js';
import { publicOrigin } from './http/public-origin.js';
import { lingerAfterEarlyAnswers } from './http/lingering-close.js';
import { cutSlowBodies } from './http/slow-bodies.js';
import { requestId } from './http/request-id.js';
import type { EventPublisher } from '@switchboard/events';
import { healthRouter, type ReadinessProbe } from './ops/health-routes.js';
import type { KeyFreshness } from './ops/nats-liveness.js';
import { type GatewayMetrics, observeRequests } from './ops/metrics.js';
import { publicDocsRouter } from './ops/public-docs.js';
import { animateRouter } from './routes/animate.js';
import { browserRouter } from './routes/browser.js';
import { browserDevtoolsRouter } from './routes/browser-devtools.js';
import { generateImageRouter } from './routes/generate-image.js';
import { modelsRouter } from './routes/models.js';
import { v1Router } from './openai/router.js';
import { queryRouter } from './routes/query.js';
import { storedFilesRouter } from './routes/stored-files.js';
import { transcribeRouter } from './routes/transcribe.js';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  keys: KeyStore;
  limiter: RateLimiter;
  /** The keys' model calls at once, shared by every replica. */
  callPlaces: ConcurrencyLimiter;
  clients: WorkerClients;
  events: EventPublisher;
  metrics: GatewayMetrics;
  readiness: ReadinessProbe;
  /** Whether NATS answers (admin calls) and the cached keys may still be honoured. */
  nats: { reachable: boolean } & KeyFreshness;
  /** Authenticated requests that stay open, ended once a new request like them would be refused. */
  live: LiveRequests;
  /** Screenshots, generated images and videos, written by the workers. */
  objects: ObjectStore;
}

/**
 * Wiring only. The order is the contract of API.md §1: probes; cluster IP allowlist; the admin
 * API behind its token; then key authentication, the key's IP allowlist and the tier gate —
 * all before the rate limit, so 401/403 never spend a key's quota — then the key's model calls
 * at once, and the routes.
 */
export function createApp({
  config,
  logger,
  keys,
  limiter,
  callPlaces,
  clients,
  events,
  metrics,
  readiness,
  objects,
  nats,
  live,
}: GatewayDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // Exact paths everywhere (see http/router.ts): `/Animate` or `/animate/` reach no handler.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('etag', false);
  app.use(requestId(logger));
  app.use(observeRequests(metrics, logger));
  app.use(helmet({ contentSecurityPolicy: false }));

  app.use(healthRouter(readiness));
  app.use(cutSlowBodies(config.http.bodyRate));
  app.use(lingerAfterEarlyAnswers({ ...config.http.linger, bodyRate: config.http.bodyRate }));

  const trustedProxies = new CidrSet(config.trustedProxies);
  // One check for new requests and for the streams and sockets that stay open (auth/access.ts).
  const access = new AccessCheck(keys, nats, new CidrSet(config.ipAllowlist));
  app.use(clusterAllowlist(access, trustedProxies));
  app.use(publicDocsRouter());
  app.use(
    '/admin',
    adminRouter({
      keys,
      events,
      clients,
      guard: new AuthFailureGuard(limiter, 'adminfail', config.adminAuthFailuresPerMinute, metrics),
      adminToken: config.adminToken,
      storeReachable: () => nats.reachable,
      bodyLimitBytes: config.http.jsonBodyLimitBytes,
    }),
  );

  const guard = new AuthFailureGuard(limiter, 'authfail', config.authFailuresPerMinute, metrics);
  app.use(authenticate({ keys, guard, access }));
  app.use(tierGate());
  app.use(rateLimit(limiter, config.tiers, metrics));
  app.use(holdModelCalls(callPlaces, config.tiers, metrics));

  const bodyLimit = config.http.jsonBodyLimitBytes;
  app.use(queryRouter(clients.llm, bodyLimit, config.streams, live));
  app.use(modelsRouter([clients.llm, clients.whisper, clients.diffusion, clients.animation]));
  app.use(transcribeRouter(clients.whisper, config.tiers));
  app.use(generateImageRouter(clients.diffusion, bodyLimit));
  app.use(animateRouter(clients.animation, objects, config.tiers, bodyLimit));
  const originOf = (req: Request) => publicOrigin(req, trustedProxies, config.publicBaseUrl);
  app.use(browserRouter(clients.browser, config.tiers, bodyLimit, originOf));
  app.use(browserDevtoolsRouter(clients.browser, logger, config.clusterSecret, live));
  app.use(storedFilesRouter(objects));
  app.use(
    '/v1',
    v1Router({
      llm: clients.llm,
      diffusion: clients.diffusion,
      whisper: clients.whisper,
      animation: clients.animation,
      tiers: config.tiers,
      objects,
      listers: [clients.llm, clients.whisper, clients.diffusion, clients.animation],
      bodyLimitBytes: bodyLimit,
      timings: config.streams,
      live,
      originOf,
    }),
  );

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
