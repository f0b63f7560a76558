// The diffusion worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { ConfigError } from '@switchboard/config';
import { runWorkerProcess } from '@switchboard/grpc';
import { loadDiffusionConfig } from './config.js';
import { startDiffusionWorker } from './worker.js';

runWorkerProcess({
  service: 'diffusion',
  loadConfig: loadDiffusionConfig,
  start: startDiffusionWorker,
  selfExplainingErrors: [ConfigError],
});
