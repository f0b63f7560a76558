// The browser worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { ConfigError } from '@switchboard/config';
import { runWorkerProcess } from '@switchboard/grpc';
import { NoWarmBrowserError } from './chromium/browser-pool.js';
import { ChromiumSandboxError } from './chromium/chromium-user.js';
import { ManagedPolicyError } from './chromium/managed-policy.js';
import { loadBrowserConfig } from './config.js';
import { startBrowserWorker } from './worker.js';

runWorkerProcess({
  service: 'browser',
  loadConfig: loadBrowserConfig,
  start: startBrowserWorker,
  selfExplainingErrors: [ConfigError, ManagedPolicyError, ChromiumSandboxError, NoWarmBrowserError],
});
