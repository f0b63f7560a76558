// The browser worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { startTracing } from '@switchboard/telemetry';

// Tracing starts before the service is imported: its instrumentations patch @grpc/grpc-js and the
// other libraries as they load, which a static import would have loaded already.
const tracing = await startTracing({ service: 'browser' });
const [
  { ConfigError },
  { runWorkerProcess },
  { loadBrowserConfig },
  { startBrowserWorker },
  { NoWarmBrowserError },
  { ChromiumSandboxError },
  { ManagedPolicyError },
] = await Promise.all([
  import('@switchboard/config'),
  import('@switchboard/grpc'),
  import('./config.js'),
  import('./worker.js'),
  import('./chromium/browser-pool.js'),
  import('./chromium/chromium-user.js'),
  import('./chromium/managed-policy.js'),
]);

runWorkerProcess({
  service: 'browser',
  loadConfig: loadBrowserConfig,
  start: startBrowserWorker,
  selfExplainingErrors: [ConfigError, ManagedPolicyError, ChromiumSandboxError, NoWarmBrowserError],
  tracing,
});
