import {
  Animation,
  type AnimationClient as GrpcAnimation,
  type Job__Output,
  type ModelInfo__Output,
  type SubmitJobRequest,
} from '@switchboard/contracts';
import { callMetadata, createClient, unary } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { endpointClientOptions, type WorkerEndpoint } from './worker-endpoint.js';

export type Job = Job__Output;

/** The gateway's one door to the animation service (which fronts the JetStream job queue). */
export class AnimationClient implements ModelLister {
  readonly capability: Capability = 'animation';
  readonly grpc: GrpcAnimation;

  constructor(endpoint: WorkerEndpoint, logger: Logger) {
    this.grpc = createClient(Animation, endpoint.address, endpointClientOptions(endpoint, logger));
  }

  submit(request: SubmitJobRequest, ctx: CallContext): Promise<Job> {
    return unary(this.grpc.SubmitJob.bind(this.grpc), request, callMetadata(ctx));
  }

  get(jobId: string, ctx: CallContext): Promise<Job> {
    return unary(this.grpc.GetJob.bind(this.grpc), { job_id: jobId }, callMetadata(ctx));
  }

  cancel(jobId: string, ctx: CallContext): Promise<Job> {
    return unary(this.grpc.CancelJob.bind(this.grpc), { job_id: jobId }, callMetadata(ctx));
  }

  /** Every job of `ownerKeyId`, or of everyone when empty (the admin dashboard). */
  async list(ownerKeyId: string, ctx: CallContext): Promise<Job[]> {
    const list = await unary(
      this.grpc.ListJobs.bind(this.grpc),
      { owner_key_id: ownerKeyId },
      callMetadata(ctx),
    );
    return list.jobs;
  }

  listModels(ctx: CallContext): Promise<ModelInfo__Output[]> {
    return listModelsOf(this.grpc, ctx);
  }
}
