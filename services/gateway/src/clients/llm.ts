import {
  Llm,
  type CompleteChunk__Output,
  type CompleteRequest,
  type CompleteResponse__Output,
  type LlmClient,
  type ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { readStream } from './streaming.js';
import { endpointClientOptions, type WorkerEndpoint } from './worker-endpoint.js';

/** The gateway's one door to the llm worker. */
export class LlmWorker implements ModelLister {
  readonly capability: Capability = 'llm';
  readonly grpc: LlmClient;

  constructor(endpoint: WorkerEndpoint, logger: Logger) {
    this.grpc = createClient(Llm, endpoint.address, endpointClientOptions(endpoint, logger));
  }

  complete(request: CompleteRequest, ctx: CallContext): Promise<CompleteResponse__Output> {
    return unary(this.grpc.Complete.bind(this.grpc), request, callMetadata(ctx), { signal: ctx.signal });
  }

  stream(request: CompleteRequest, ctx: CallContext): AsyncIterable<CompleteChunk__Output> {
    return readStream(this.grpc.StreamComplete(request, callMetadata(ctx)), ctx.signal);
  }

  listModels(ctx: CallContext): Promise<ModelInfo__Output[]> {
    return listModelsOf(this.grpc, ctx);
  }
}
