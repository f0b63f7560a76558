import { exactRouter } from '../http/router.js';
import type { Router } from 'express';

export interface ReadinessProbe {
  /** NATS connected and the key view loaded: without it no request can be authenticated. */
  keyStoreReady(): boolean;
  /** Redis reachable; when not, limits are counted per process (degraded, still serving). */
  rateLimitStoreReady(): boolean;
}

/**
 * /healthz is liveness only: it checks nothing, so a dependency outage never restarts gateways.
 * /readyz is 503 without the key store; a lost Redis is reported as degraded but stays 200, so
 * every replica going unready at once cannot turn a Redis outage into a full outage.
 */
export function healthRouter(probe: ReadinessProbe): Router {
  const router = exactRouter();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', (_req, res) => {
    const keyStore = probe.keyStoreReady();
    const rateLimitStore = probe.rateLimitStoreReady();
    const status = !keyStore ? 'unavailable' : rateLimitStore ? 'ready' : 'degraded';
    res.status(keyStore ? 200 : 503).json({
      status,
      checks: {
        key_store: keyStore ? 'ok' : 'unreachable',
        rate_limit_store: rateLimitStore ? 'ok' : 'unreachable (limits counted per gateway process)',
      },
    });
  });
  return router;
}
