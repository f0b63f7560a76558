// The whisper worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { ConfigError } from '@switchboard/config';
import { runWorkerProcess } from '@switchboard/grpc';
import { loadWhisperConfig } from './config.js';
import { startWhisperWorker } from './worker.js';

runWorkerProcess({
  service: 'whisper',
  loadConfig: loadWhisperConfig,
  start: startWhisperWorker,
  selfExplainingErrors: [ConfigError],
});
