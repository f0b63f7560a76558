import type { ModelInfo__Output } from '@switchboard/contracts';
import type { JobBoard } from '@switchboard/jobs';
import type { Capability, ModelLister } from './model-lister.js';

/**
 * The gateway's one door to animation: the job board in JetStream and KV (libs/jobs). Animation
 * workers are never called — they pull — so submitting, reading, listing and cancelling work
 * while every worker is scaled to zero. The models listed are what the workers last described.
 */
export class AnimationJobs implements ModelLister {
  readonly capability: Capability = 'animation';

  constructor(readonly board: JobBoard) {}

  async listModels(): Promise<ModelInfo__Output[]> {
    const catalogue = await this.board.catalogue();
    return [...catalogue.values()].flatMap((backend) =>
      backend.models.map((model) => ({
        id: `${backend.backend}/${model.id}`,
        status: model.status,
        is_default: model.is_default,
        description: backend.configured ? model.description : model.description || 'not configured',
        development: model.development,
        dtype: model.dtype,
        context_length: 0,
        multilingual: false,
        languages: [],
        native_width: backend.native_width ?? 0,
        native_height: backend.native_height ?? 0,
      })),
    );
  }

  /** False only when a worker said the back-end cannot run (avatar without vendor settings). */
  async isConfigured(backend: string): Promise<boolean> {
    const catalogue = await this.board.catalogue();
    const entry = [...catalogue.values()].find((b) => b.backend === backend);
    return entry?.configured ?? true;
  }
}
