import type { ModelInfo__Output } from '@switchboard/contracts';
import type { CallContext } from './call-context.js';

export type Capability = 'llm' | 'whisper' | 'diffusion' | 'animation';

/** What GET /models needs from each model worker's client. */
export interface ModelLister {
  readonly capability: Capability;
  listModels(ctx: CallContext): Promise<ModelInfo__Output[]>;
}
