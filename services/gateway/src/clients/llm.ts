import {
  Llm,
  type CompleteChunk__Output,
  type CompleteRequest,
  type CompleteResponse__Output,
  type LlmClient,
  type ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, type ReplicaInfo, type ReplicaPool } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { defaultRouting, workerPool, type WorkerEndpoint, type WorkerRouting } from './worker-endpoint.js';

/** The gateway's one door to the llm workers, every replica of them. */
export class LlmWorker implements ModelLister {
  readonly capability: Capability = 'llm';
  readonly pool: ReplicaPool<LlmClient>;

  constructor(endpoint: WorkerEndpoint, logger: Logger, routing: WorkerRouting = defaultRouting) {
    this.pool = workerPool('llm', Llm, endpoint, logger, routing);
  }

  complete(request: CompleteRequest, ctx: CallContext): Promise<CompleteResponse__Output> {
    return this.pool.unary((client) => client.Complete.bind(client), request, callMetadata(ctx), {
      signal: ctx.signal,
    });
  }

  stream(request: CompleteRequest, ctx: CallContext): AsyncIterable<CompleteChunk__Output> {
    return this.pool.stream(
      (client, options) => client.StreamComplete(request, callMetadata(ctx), options),
      ctx.signal,
    );
  }

  listModels(ctx: CallContext): Promise<ModelInfo__Output[]> {
    return listModelsOf(this.pool, ctx);
  }

  /** Each replica: address, health, calls open from this gateway, calls sent. */
  replicas(): ReplicaInfo[] {
    return this.pool.replicas();
  }

  close(): void {
    this.pool.close();
  }
}
