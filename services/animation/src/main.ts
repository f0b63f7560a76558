// The animation worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { ConfigError } from '@switchboard/config';
import { runWorkerProcess } from '@switchboard/grpc';
import { loadAnimationConfig } from './config.js';
import { startAnimationWorker } from './worker.js';

runWorkerProcess({
  service: 'animation',
  loadConfig: loadAnimationConfig,
  start: startAnimationWorker,
  selfExplainingErrors: [ConfigError],
});
