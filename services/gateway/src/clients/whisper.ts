import {
  Whisper,
  type ModelInfo__Output,
  type TranscribeChunk,
  type TranscribeResponse__Output,
  type WhisperClient,
} from '@switchboard/contracts';
import { callMetadata, type ReplicaInfo, type ReplicaPool } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { StreamSender } from './streaming.js';
import { defaultRouting, workerPool, type WorkerEndpoint, type WorkerRouting } from './worker-endpoint.js';

export type TranscriptionUpload = StreamSender<TranscribeChunk, TranscribeResponse__Output>;

/** The gateway's one door to the whisper workers, every replica of them. */
export class WhisperWorker implements ModelLister {
  readonly capability: Capability = 'whisper';
  readonly pool: ReplicaPool<WhisperClient>;

  constructor(endpoint: WorkerEndpoint, logger: Logger, routing: WorkerRouting = defaultRouting) {
    this.pool = workerPool('whisper', Whisper, endpoint, logger, routing);
  }

  /**
   * Opens the client stream on the least busy replica; the caller sends the options, then the
   * bytes, then finishes. An upload is never sent again elsewhere: its bytes are not kept.
   */
  transcribe(ctx: CallContext): TranscriptionUpload {
    const replica = this.pool.lease();
    let call: ReturnType<WhisperClient['Transcribe']> | undefined;
    const response = new Promise<TranscribeResponse__Output>((resolve, reject) => {
      call = replica.client.Transcribe(callMetadata(ctx), (error, result) => {
        replica.done();
        if (error) reject(error);
        else if (result) resolve(result);
        else reject(new Error('empty response'));
      });
    });
    return new StreamSender(call!, response);
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
