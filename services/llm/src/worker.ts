// The llm worker: the shared model-worker life (startModelWorker) with causal language models,
// the completion service and its metrics.
import { startModelWorker, type RunningModelWorker } from '@switchboard/models';
import type { Logger } from '@switchboard/telemetry';
import { loadCausalLm } from './adapters/causal-lm.js';
import { CompletionService } from './completion/service.js';
import type { LlmConfig } from './config.js';
import { createLlmMetrics } from './metrics.js';
import { llmService } from './server.js';

export function startLlmWorker(config: LlmConfig, logger: Logger): Promise<RunningModelWorker> {
  return startModelWorker(
    {
      name: 'llm',
      config,
      createMetrics: createLlmMetrics,
      load: (entry) => loadCausalLm(entry, config.execution, config.dtype),
      details: (model) => ({ dtype: model.dtype, contextLength: model.contextLength }),
      dispose: (model) => model.dispose(),
      services: ({ models, metrics }) => [
        llmService(new CompletionService(models, config.batching, metrics)),
      ],
    },
    logger,
  );
}
