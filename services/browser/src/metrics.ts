// The browser worker's Prometheus metrics: capacity, active sessions, pool size, session and call outcomes.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const actionBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createBrowserMetrics(registry: Registry) {
  const registers = [registry];
  return {
    activeSessions: new Gauge({
      name: 'browser_active_sessions',
      help: 'Sessions holding a Chromium process now.',
      registers,
    }),
    sessionCapacity: new Gauge({
      name: 'browser_session_capacity',
      help: 'The most sessions this worker accepts at once (BROWSER_MAX_SESSIONS), warm browsers included.',
      registers,
    }),
    poolSize: new Gauge({
      name: 'browser_pool_warm_browsers',
      help: 'Pre-launched browsers waiting for a session.',
      registers,
    }),
    actionSeconds: new Histogram({
      name: 'browser_action_duration_seconds',
      help: 'Duration of session calls (create, navigate, input, submit, capture, content, pdf, close) by outcome.',
      labelNames: ['action', 'outcome'],
      buckets: actionBuckets,
      registers,
    }),
    sessionsEnded: new Counter({
      name: 'browser_sessions_ended_total',
      help: 'Sessions that ended, by why (closed, expired, memory_limit, page_crashed, browser_exited, shutdown).',
      labelNames: ['reason'],
      registers,
    }),
    blockedRequests: new Counter({
      name: 'browser_blocked_requests_total',
      help: 'Requests the address guard refused (navigations, redirects, sub-resources, service worker scripts).',
      registers,
    }),
    launchSeconds: new Histogram({
      name: 'browser_launch_duration_seconds',
      help: 'Launching and connecting one pooled Chromium.',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers,
    }),
  };
}

export type BrowserMetrics = ReturnType<typeof createBrowserMetrics>;
