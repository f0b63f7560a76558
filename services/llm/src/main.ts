// The llm worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { ConfigError } from '@switchboard/config';
import { runWorkerProcess } from '@switchboard/grpc';
import { loadLlmConfig } from './config.js';
import { startLlmWorker } from './worker.js';

runWorkerProcess({
  service: 'llm',
  loadConfig: loadLlmConfig,
  start: startLlmWorker,
  selfExplainingErrors: [ConfigError],
});
