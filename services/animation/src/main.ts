// The animation worker process: config from the environment, the worker, closed on SIGTERM/SIGINT.
import { startTracing } from '@switchboard/telemetry';

// Tracing starts before the service is imported: its instrumentations patch @grpc/grpc-js and the
// other libraries as they load, which a static import would have loaded already.
const tracing = await startTracing({ service: 'animation' });
const [{ ConfigError }, { runWorkerProcess }, { loadAnimationConfig }, { startAnimationWorker }] =
  await Promise.all([
    import('@switchboard/config'),
    import('@switchboard/grpc'),
    import('./config.js'),
    import('./worker.js'),
  ]);

runWorkerProcess({
  service: 'animation',
  loadConfig: loadAnimationConfig,
  start: startAnimationWorker,
  selfExplainingErrors: [ConfigError],
  tracing,
});
