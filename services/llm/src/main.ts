// The llm worker: the shared model-worker life (libs/models runModelWorker) with causal language
// models, the completion service and its metrics.
import { ConfigError } from '@switchboard/config';
import { runModelWorker } from '@switchboard/models';
import { loadCausalLm } from './adapters/causal-lm.js';
import { CompletionService } from './completion/service.js';
import { loadLlmConfig } from './config.js';
import { createLlmMetrics } from './metrics.js';
import { llmService } from './server.js';

async function main(): Promise<void> {
  const config = loadLlmConfig();
  await runModelWorker({
    name: 'llm',
    config,
    createMetrics: createLlmMetrics,
    load: (entry) => loadCausalLm(entry, config.execution, config.dtype),
    details: (model) => ({ dtype: model.dtype, contextLength: model.contextLength }),
    dispose: (model) => model.dispose(),
    services: ({ models, metrics }) => [llmService(new CompletionService(models, config.batching, metrics))],
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
