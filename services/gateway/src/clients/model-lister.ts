import type {
  ListModelsRequest,
  ListModelsResponse__Output,
  ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, unary, type UnaryMethod } from '@switchboard/grpc';
import type { CallContext } from './call-context.js';

export type Capability = 'llm' | 'whisper' | 'diffusion' | 'animation';

/** What GET /models needs from each model worker's client. */
export interface ModelLister {
  readonly capability: Capability;
  listModels(ctx: CallContext): Promise<ModelInfo__Output[]>;
}

/** Every model worker serves the same ListModels; a short deadline keeps /models quick. */
export async function listModelsOf(
  client: { ListModels: UnaryMethod<ListModelsRequest, ListModelsResponse__Output> },
  ctx: CallContext,
): Promise<ModelInfo__Output[]> {
  const list = await unary(client.ListModels.bind(client), {}, callMetadata(ctx), {
    deadline: Date.now() + 2000,
  });
  return list.models;
}
