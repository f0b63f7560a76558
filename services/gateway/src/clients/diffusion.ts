import {
  Diffusion,
  type DiffusionClient,
  type GenerateImageRequest,
  type GenerateImageResponse__Output,
  type ModelInfo__Output,
} from '@switchboard/contracts';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { endpointClientOptions, type WorkerEndpoint } from './worker-endpoint.js';

/** The gateway's one door to the diffusion worker. */
export class DiffusionWorker implements ModelLister {
  readonly capability: Capability = 'diffusion';
  readonly grpc: DiffusionClient;

  constructor(endpoint: WorkerEndpoint, logger: Logger) {
    this.grpc = createClient(Diffusion, endpoint.address, endpointClientOptions(endpoint, logger));
  }

  generate(request: GenerateImageRequest, ctx: CallContext): Promise<GenerateImageResponse__Output> {
    return unary(this.grpc.GenerateImage.bind(this.grpc), request, callMetadata(ctx), { signal: ctx.signal });
  }

  listModels(ctx: CallContext): Promise<ModelInfo__Output[]> {
    return listModelsOf(this.grpc, ctx);
  }
}
