import type { Router } from 'express';
import { dependencyUnavailable } from '@switchboard/errors';
import { requireAdminToken } from '../auth/admin-token.js';
import type { AuthFailureGuard } from '../auth/authenticate.js';
import { ClusterStatus, adminSurface, tag } from '../contract/administration.js';
import type { SessionStatus } from '../contract/browser-sessions.js';
import { adminErrors, json } from '../contract/responses.js';
import { route } from '../http/route.js';
import { exactRouter } from '../http/router.js';
import {
  asset,
  browserEntry,
  contentSecurityPolicy,
  dependencyFile,
  page,
  publicFile,
  staticFileRoute,
} from '../http/static-files.js';
import { adminBrowserSessionRoute } from './browser-sessions-routes.js';
import { adminJobPage, jobsRoutes, STATUS_JOBS } from './jobs-routes.js';
import { keysRoutes } from './keys-routes.js';
import { usageAdminRoutes } from './usage-routes.js';
import { keyWebhooksRoute } from './webhooks-routes.js';
import { adminLiveLinkRoute } from '../live/routes.js';

/**
 * The dashboard runs only its own files (its script, lit-html and uPlot, all same-origin) and calls only
 * this gateway: no inline script or style, no frames, nothing from elsewhere. Its one image is the
 * empty data: favicon that keeps the browser from asking for /favicon.ico.
 */
const dashboardPolicy = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self'",
  'connect-src': "'self'",
  'img-src': 'data:',
});

export const clusterStatusRoute = route({
  method: 'get',
  path: '/admin/api/status',
  operationId: 'clusterStatus',
  ...adminSurface,
  summary: 'Cluster status',
  description:
    "Each worker's health, the cluster's browser capacity and sessions by key, live browser sessions and animation jobs (what the dashboard shows).",
  responses: { 200: { description: 'The status.', content: json(ClusterStatus) } },
  errors: adminErrors,
  async handle({ deps }) {
    const { clients, nats } = deps;
    const [workers, jobs] = await Promise.all([
      clients.health(),
      // The same rows as GET /admin/api/jobs; null (the dashboard says so) while NATS is away.
      nats.reachable
        ? adminJobPage(clients.animation, { limit: STATUS_JOBS })
            .then((page) => page.data)
            .catch(() => null)
        : null,
    ]);
    // Sessions of every browser worker, and the capacity they share, from the registry this
    // replica watches.
    return {
      workers,
      browser: clients.browser.capacityStatus(),
      // The registry keeps the status as a string; the workers write only the documented ones.
      browser_sessions: clients.browser
        .listSessions()
        .map((session) => ({ ...session, status: session.status as SessionStatus })),
      animation_jobs: jobs,
    };
  },
});

/**
 * The dashboard (public/admin: a page, its style sheet and script, and lit-html and uPlot from
 * node_modules) is public: it holds no data and asks for the token.
 */
export const adminPageRoutes = [
  staticFileRoute({
    path: '/admin',
    operationId: 'adminDashboard',
    tag,
    kind: 'page',
    summary: 'Admin dashboard (web page)',
    description:
      'A page to create, edit, rotate and revoke keys and to see live browser sessions, animation jobs and worker health. The page holds no data: it asks for the admin token and sends it on its own calls.',
    serves: page(publicFile('admin/index.html'), dashboardPolicy),
  }),
  staticFileRoute({
    path: '/admin/dashboard.css',
    operationId: 'adminDashboardStyle',
    tag,
    kind: 'style',
    summary: 'The style sheet of the admin dashboard',
    serves: asset(publicFile('admin/dashboard.css')),
  }),
  staticFileRoute({
    path: '/admin/dashboard.js',
    operationId: 'adminDashboardScript',
    tag,
    kind: 'script',
    summary: 'The script of the admin dashboard',
    serves: asset(publicFile('admin/dashboard.js')),
  }),
  staticFileRoute({
    path: '/admin/usage-charts.js',
    operationId: 'adminDashboardUsageCharts',
    tag,
    kind: 'script',
    summary: "The dashboard script's usage charts",
    serves: asset(publicFile('admin/usage-charts.js')),
  }),
  staticFileRoute({
    path: '/admin/lit-html.js',
    operationId: 'adminDashboardLitHtml',
    tag,
    kind: 'script',
    summary: 'lit-html, which the dashboard script renders with',
    serves: asset(browserEntry('lit-html')),
  }),
  staticFileRoute({
    path: '/admin/uplot.js',
    operationId: 'adminDashboardUplot',
    tag,
    kind: 'script',
    summary: 'uPlot, which the dashboard draws its usage charts with',
    serves: asset(dependencyFile('uplot/dist/uPlot.esm.js')),
  }),
  staticFileRoute({
    path: '/admin/uplot.css',
    operationId: 'adminDashboardUplotStyle',
    tag,
    kind: 'style',
    summary: "uPlot's style sheet",
    serves: asset(dependencyFile('uplot/dist/uPlot.min.css')),
  }),
];

/** Everything under /admin/api, behind the admin token (adminApiGuards), never an API key. */
export const adminApiRoutes = [
  ...keysRoutes,
  ...usageAdminRoutes,
  keyWebhooksRoute,
  ...jobsRoutes,
  adminBrowserSessionRoute,
  adminLiveLinkRoute,
  clusterStatusRoute,
];

/**
 * /admin/api needs the admin token. Keys and jobs live in NATS: while it does not answer their
 * calls are 503 at once rather than a hang.
 */
export function adminApiGuards(deps: {
  adminToken: string;
  guard: AuthFailureGuard;
  nats: { reachable: boolean };
}): Router {
  const router = exactRouter();
  router.use('/admin/api', requireAdminToken(deps.adminToken, deps.guard));
  router.use('/admin/api/keys', (_req, _res, next) => {
    if (deps.nats.reachable) next();
    else next(dependencyUnavailable('The key store is unreachable; retry shortly.'));
  });
  router.use('/admin/api/jobs', (_req, _res, next) => {
    if (deps.nats.reachable) next();
    else next(dependencyUnavailable('The job store is unreachable; retry shortly.'));
  });
  return router;
}
