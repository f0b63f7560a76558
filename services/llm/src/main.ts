// The llm worker: serve gRPC at once (NOT_SERVING), load the models in the background, report
// SERVING when the default model is ready. Requests that come earlier get model_loading.
import { resolve } from 'node:path';
import { ConfigError } from '@switchboard/config';
import { shutdownOnSignals, startGrpcServer } from '@switchboard/grpc';
import { ModelRegistry, scanRepository, useLocalModels, WorkQueue } from '@switchboard/models';
import { createLogger, createRegistry, startMetricsServer } from '@switchboard/telemetry';
import { loadCausalLm } from './adapters/causal-lm.js';
import { CompletionService } from './completion/service.js';
import { loadLlmConfig } from './config.js';
import type { LanguageModel } from './generation/model.js';
import { createLlmMetrics } from './metrics.js';
import { llmService } from './server.js';

async function main(): Promise<void> {
  const config = loadLlmConfig();
  const logger = createLogger({ service: 'llm', level: config.logLevel });
  const promRegistry = createRegistry('llm');
  const metrics = createLlmMetrics(promRegistry);

  const scan = await scanRepository(resolve(config.modelDir), 'llm', { defaultModel: config.defaultModel });
  useLocalModels(scan.capabilityDir);
  for (const model of scan.models) {
    if (model.description) logger.warn({ model: model.id, note: model.description }, 'development model');
  }
  const models = new ModelRegistry<LanguageModel>({
    scan,
    logger,
    load: (entry) => loadCausalLm(entry, config.execution),
    dispose: (model) => model.dispose(),
    onLoaded: (entry, status, seconds) => metrics.modelLoadSeconds.set({ model: entry.id, status }, seconds),
    loadingRetryAfterSeconds: config.loadingRetryAfterSeconds,
    loadDelayMs: config.loadDelayMs,
  });
  const queue = new WorkQueue({
    ...config.queue,
    onDepth: (waiting, running) => {
      metrics.queueDepth.set(waiting);
      metrics.activeGenerations.set(running);
    },
  });
  const completions = new CompletionService(models, queue, metrics);

  const server = await startGrpcServer({
    port: config.grpc.port,
    host: config.grpc.host,
    logger,
    services: [llmService(completions)],
  });
  const metricsServer = await startMetricsServer(promRegistry, config.metricsPort);
  logger.info(
    {
      port: server.port,
      metrics_port: metricsServer.port,
      models: scan.models.length,
      default: scan.defaultId,
    },
    'llm worker started',
  );
  shutdownOnSignals(server, {
    logger,
    graceMs: config.shutdownGraceMs,
    onShutdown: async () => {
      await metricsServer.close();
      await models.dispose();
    },
  });

  models.loadAll().then(
    () => server.health.setAll('SERVING'),
    // Without its default model the worker stays NOT_SERVING; the reason is already logged.
    (error: unknown) => logger.error({ err: error }, 'default model unavailable; not serving'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
