import type { Client } from '@grpc/grpc-js';
import type {
  ListModelsRequest,
  ListModelsResponse__Output,
  ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, type ReplicaPool, type UnaryMethod } from '@switchboard/grpc';
import type { CallContext } from './call-context.js';

export type Capability = 'llm' | 'whisper' | 'diffusion' | 'animation';

/** What GET /models needs from each model worker's client. */
export interface ModelLister {
  readonly capability: Capability;
  listModels(ctx: CallContext): Promise<ModelInfo__Output[]>;
}

/**
 * Every model worker serves the same ListModels, and every replica of one the same models, so any
 * replica answers; a short deadline keeps /models quick.
 */
export async function listModelsOf<
  C extends Client & { ListModels: UnaryMethod<ListModelsRequest, ListModelsResponse__Output> },
>(pool: ReplicaPool<C>, ctx: CallContext): Promise<ModelInfo__Output[]> {
  const list = await pool.unary((client) => client.ListModels.bind(client), {}, callMetadata(ctx), {
    deadline: Date.now() + 2000,
  });
  return list.models;
}
