import type { ModelInfo__Output } from '@switchboard/contracts';
import type { CallContext } from './call-context.js';
import type { WorkerClients } from './index.js';
import type { Capability } from './model-lister.js';

type Answer = { at: number; models: Promise<ModelInfo__Output[] | null> };

/**
 * The model lists of every capability. Lists change only when a model finishes loading, so each
 * worker's answer (or its absence) is kept for a moment: a burst of model listings costs each
 * worker one call, not one each.
 */
export class ModelCatalogue {
  private readonly listers;
  private readonly answers = new Map<Capability, Answer>();

  constructor(
    clients: WorkerClients,
    private readonly ttlMs = 2000,
  ) {
    this.listers = [clients.llm, clients.whisper, clients.diffusion, clients.animation];
  }

  /** Each capability's models; `null` for a worker that does not answer (left out, not failing all). */
  read(ctx: CallContext): Promise<{ capability: Capability; models: ModelInfo__Output[] | null }[]> {
    const now = Date.now();
    return Promise.all(
      this.listers.map(async (lister) => {
        let answer = this.answers.get(lister.capability);
        if (!answer || now - answer.at > this.ttlMs) {
          answer = { at: now, models: lister.listModels(ctx).catch(() => null) };
          this.answers.set(lister.capability, answer);
        }
        return { capability: lister.capability, models: await answer.models };
      }),
    );
  }
}
