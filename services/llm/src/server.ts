// Wiring only: which method of the completion service answers which RPC.
import { defineService, type ServiceRegistration } from '@switchboard/grpc';
import type { CompletionService } from './completion/service.js';

export function llmService(completions: CompletionService): ServiceRegistration {
  return defineService('Llm', {
    Complete: (request, ctx) => completions.complete(request, ctx.signal, ctx.keyId),
    StreamComplete: (request, ctx) => completions.stream(request, ctx.signal, ctx.keyId),
    ListModels: async () => completions.listModels(),
  });
}
