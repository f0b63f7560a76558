import type { Router } from 'express';
import type { KeyStore } from '@switchboard/keys';
import { SwitchboardError } from '@switchboard/errors';
import { exactRouter } from '../http/router.js';
import { requireAdminToken } from '../auth/admin-token.js';
import type { AuthFailureGuard } from '../auth/authenticate.js';
import type { WorkerClients } from '../clients/index.js';
import type { EventPublisher } from '@switchboard/events';
import { asset, browserEntry, contentSecurityPolicy, page, publicFile } from '../http/static-files.js';
import { browserSessionsRouter } from './browser-sessions-routes.js';
import { adminJobPage, jobsRouter, STATUS_JOBS } from './jobs-routes.js';
import { keysRouter } from './keys-routes.js';

interface AdminDeps {
  keys: KeyStore;
  events: EventPublisher;
  clients: WorkerClients;
  guard: AuthFailureGuard;
  adminToken: string;
  bodyLimitBytes: number;
  /** False while NATS does not answer: key administration is then 503 at once, not a hang. */
  storeReachable: () => boolean;
}

/**
 * The dashboard runs only its own files (its script and lit-html, both same-origin) and calls only
 * this gateway: no inline script or style, no frames, nothing from elsewhere. Its one image is the
 * empty data: favicon that keeps the browser from asking for /favicon.ico.
 */
const dashboardPolicy = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self'",
  'connect-src': "'self'",
  'img-src': 'data:',
});

/**
 * /admin: the dashboard (public/admin: a page, its style sheet and script, and lit-html from
 * node_modules) is public — it holds no data and asks for the token; everything under /admin/api
 * needs the admin token, never an API key.
 */
export function adminRouter(deps: AdminDeps): Router {
  const router = exactRouter();
  router.get('/', page(publicFile('admin/index.html'), dashboardPolicy));
  router.get('/dashboard.css', asset(publicFile('admin/dashboard.css')));
  router.get('/dashboard.js', asset(publicFile('admin/dashboard.js')));
  router.get('/lit-html.js', asset(browserEntry('lit-html')));
  router.use('/api', requireAdminToken(deps.adminToken, deps.guard));
  router.use('/api/keys', (_req, _res, next) => {
    if (deps.storeReachable()) next();
    else
      next(new SwitchboardError('unavailable', { message: 'The key store is unreachable; retry shortly.' }));
  });
  // Jobs live in NATS too (JetStream and KV): the same answer at once instead of a hang.
  router.use('/api/jobs', (_req, _res, next) => {
    if (deps.storeReachable()) next();
    else
      next(new SwitchboardError('unavailable', { message: 'The job store is unreachable; retry shortly.' }));
  });
  router.use('/api', keysRouter(deps.keys, deps.events, deps.bodyLimitBytes));
  router.use('/api', jobsRouter(deps.clients.animation.board));
  router.use('/api', browserSessionsRouter(deps.clients.browser));
  router.get('/api/status', async (_req, res) => {
    const [workers, jobs] = await Promise.all([
      deps.clients.health(),
      // The same rows as GET /admin/api/jobs; null (the dashboard says so) while NATS is away.
      deps.storeReachable()
        ? adminJobPage(deps.clients.animation.board, { limit: STATUS_JOBS })
            .then((page) => page.data)
            .catch(() => null)
        : null,
    ]);
    // Sessions of every browser worker, and the capacity they share, from the registry this
    // replica watches.
    res.json({
      workers,
      browser: deps.clients.browser.capacityStatus(),
      browser_sessions: deps.clients.browser.listSessions(),
      animation_jobs: jobs,
    });
  });
  return router;
}
