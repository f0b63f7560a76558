import { Health, Readiness, tag } from '../contract/operations.js';
import { json } from '../contract/responses.js';
import { route } from '../http/route.js';

export interface ReadinessProbe {
  /** NATS connected and the key view loaded: without it no request can be authenticated. */
  keyStoreReady(): boolean;
  /** Redis reachable; when not, limits are counted per process (degraded, still serving). */
  rateLimitStoreReady(): boolean;
}

export const healthzRoute = route({
  method: 'get',
  path: '/healthz',
  operationId: 'healthz',
  tag,
  auth: 'public',
  summary: 'Liveness',
  description: 'Checks no dependency.',
  responses: { 200: { description: 'The process is alive.', content: json(Health) } },
  errors: [],
  handle: () => ({ status: 'ok' }),
});

export const readyzRoute = route({
  method: 'get',
  path: '/readyz',
  operationId: 'readyz',
  tag,
  auth: 'public',
  summary: 'Readiness',
  description:
    'Ready when the key store and the rate-limit store are reachable; a lost rate-limit store is reported as `degraded`.',
  responses: {
    200: { description: 'Ready (or degraded).', content: json(Readiness) },
    // Probes read the status, people the checks: not an error body.
    503: { description: 'Not ready: the key store is unreachable.', content: json(Readiness) },
  },
  errors: [],
  serve({ res, deps }) {
    const keyStore = deps.readiness.keyStoreReady();
    const rateLimitStore = deps.readiness.rateLimitStoreReady();
    const status = !keyStore ? 'unavailable' : rateLimitStore ? 'ready' : 'degraded';
    res.status(keyStore ? 200 : 503).json({
      status,
      checks: {
        key_store: keyStore ? 'ok' : 'unreachable',
        rate_limit_store: rateLimitStore ? 'ok' : 'unreachable (limits counted per gateway process)',
      },
    });
  },
});

/**
 * /healthz is liveness only: it checks nothing, so a dependency outage never restarts gateways.
 * /readyz is 503 without the key store; a lost Redis is reported as degraded but stays 200, so
 * every replica going unready at once cannot turn a Redis outage into a full outage.
 */
export const probeRoutes = [healthzRoute, readyzRoute];
