import express, { type Express, type Request } from 'express';
import helmet from 'helmet';
import type { KeyStore } from '@switchboard/keys';
import type { ObjectStore } from '@switchboard/objectstore';
import type { ConcurrencyLimiter, RateLimiter } from '@switchboard/ratelimit';
import type { Logger } from '@switchboard/telemetry';
import type { UsageStore } from '@switchboard/usage';
import type { GatewayWebhooks } from './webhooks/gateway-webhooks.js';
import type { LiveLinks } from './live/link-store.js';
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
import { adminApiGuards } from './admin/admin-routes.js';
import { openApiDocument } from './contract/document.js';
import { mountRoutes, RouteTable, type RouteDeps } from './http/route.js';
import type { ReadinessProbe } from './ops/health-routes.js';
import { adminApiRoutes, allRoutes, apiKeyRoutes, probeRoutes, publicRoutes } from './route-catalogue.js';
import type { KeyFreshness } from './ops/nats-liveness.js';
import { type GatewayMetrics, observeRequests } from './ops/metrics.js';

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
  /** Usage records and quota reservations, shared by every replica. */
  usage: UsageStore;
  /** Webhook endpoints and their delivery log; absent while webhooks are off (their calls answer 503). */
  webhooks?: GatewayWebhooks;
  /** Live-view links, shared by every replica; absent, their calls answer 503. */
  liveLinks?: LiveLinks;
}

/**
 * Wiring only. The order is the gateway's access policy: probes; cluster IP allowlist; the admin
 * API behind its token; then key authentication, the key's IP allowlist and the tier gate — all
 * before the rate limit, so 401/403 never spend a key's quota — then the key's model calls at
 * once, and the routes. The route a request is for is matched first, so every step (and the
 * error dialect) reads its declaration.
 */
export function createApp(deps: GatewayDeps): Express {
  const { config, logger, keys, limiter, callPlaces, metrics, nats } = deps;
  const app = express();
  app.disable('x-powered-by');
  // Exact paths everywhere (see http/router.ts): `/Animate` or `/animate/` reach no handler.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('etag', false);
  app.use(requestId(logger));
  app.use(new RouteTable(allRoutes).matcher());
  app.use(observeRequests(metrics, logger));
  app.use(helmet({ contentSecurityPolicy: false }));

  const trustedProxies = new CidrSet(config.trustedProxies);
  const routeDeps: RouteDeps = {
    ...deps,
    originOf: (req: Request) => publicOrigin(req, trustedProxies, config.publicBaseUrl),
    openApiJson: JSON.stringify(openApiDocument),
  };
  app.use(mountRoutes(probeRoutes, routeDeps));
  app.use(cutSlowBodies(config.http.bodyRate));
  app.use(lingerAfterEarlyAnswers({ ...config.http.linger, bodyRate: config.http.bodyRate }));

  // One check for new requests and for the streams and sockets that stay open (auth/access.ts).
  const access = new AccessCheck(keys, nats, new CidrSet(config.ipAllowlist));
  app.use(clusterAllowlist(access, trustedProxies));
  app.use(mountRoutes(publicRoutes, routeDeps));
  app.use(
    adminApiGuards({
      adminToken: config.adminToken,
      guard: new AuthFailureGuard(limiter, 'adminfail', config.adminAuthFailuresPerMinute, metrics),
      nats,
    }),
  );
  app.use(mountRoutes(adminApiRoutes, routeDeps));

  const guard = new AuthFailureGuard(limiter, 'authfail', config.authFailuresPerMinute, metrics);
  app.use(authenticate({ keys, guard, access }));
  app.use(tierGate());
  app.use(rateLimit(limiter, config.tiers, metrics));
  app.use(holdModelCalls(callPlaces, config.tiers, metrics));
  app.use(mountRoutes(apiKeyRoutes, routeDeps));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
