import {
  Diffusion,
  type DiffusionClient,
  type GenerateImageRequest,
  type GenerateImageResponse__Output,
  type ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, type ReplicaInfo, type ReplicaPool } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { defaultRouting, workerPool, type WorkerEndpoint, type WorkerRouting } from './worker-endpoint.js';

/** The gateway's one door to the diffusion workers, every replica of them. */
export class DiffusionWorker implements ModelLister {
  readonly capability: Capability = 'diffusion';
  readonly pool: ReplicaPool<DiffusionClient>;

  constructor(endpoint: WorkerEndpoint, logger: Logger, routing: WorkerRouting = defaultRouting) {
    this.pool = workerPool('diffusion', Diffusion, endpoint, logger, routing);
  }

  generate(request: GenerateImageRequest, ctx: CallContext): Promise<GenerateImageResponse__Output> {
    return this.pool.unary((client) => client.GenerateImage.bind(client), request, callMetadata(ctx), {
      signal: ctx.signal,
    });
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
