import type { ModelInfo__Output } from '@switchboard/contracts';
import type {
  BackendDescription,
  JobBoard,
  JobPage,
  JobRecord,
  ListOptions,
  Submission,
  SubmitOutcome,
} from '@switchboard/jobs';
import type { Capability, ModelLister } from './model-lister.js';

/**
 * The gateway's one door to animation: the job board in JetStream and KV (libs/jobs). Animation
 * workers are never called — they pull — so submitting, reading, listing and cancelling work
 * while every worker is scaled to zero. The models listed are what the workers last described.
 */
export class AnimationJobs implements ModelLister {
  readonly capability: Capability = 'animation';

  constructor(private readonly board: JobBoard) {}

  submit(submission: Submission): Promise<SubmitOutcome> {
    return this.board.submit(submission);
  }

  /** One job of its owner. */
  get(ownerKeyId: string, jobId: string): Promise<JobRecord> {
    return this.board.get(ownerKeyId, jobId);
  }

  /** The jobs of one owner, or of every owner (`null`), newest first. */
  list(ownerKeyId: string | null, options: ListOptions): Promise<JobPage> {
    return this.board.list(ownerKeyId, options);
  }

  /** Cancels a job of its owner, or of any owner (`null`). */
  cancel(ownerKeyId: string | null, jobId: string): Promise<JobRecord> {
    return this.board.cancel(ownerKeyId, jobId);
  }

  /** What the workers last said about a back-end; undefined while none has described it. */
  async backend(name: string): Promise<BackendDescription | undefined> {
    const catalogue = await this.board.catalogue();
    return [...catalogue.values()].find((entry) => entry.backend === name);
  }

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
}
