import {
  Whisper,
  type ModelInfo__Output,
  type TranscribeChunk,
  type TranscribeResponse__Output,
  type WhisperClient,
} from '@switchboard/contracts';
import { callMetadata, createClient } from '@switchboard/grpc';
import type { Logger } from '@switchboard/telemetry';
import type { CallContext } from './call-context.js';
import { listModelsOf, type Capability, type ModelLister } from './model-lister.js';
import { StreamSender } from './streaming.js';
import { endpointClientOptions, type WorkerEndpoint } from './worker-endpoint.js';

export type TranscriptionUpload = StreamSender<TranscribeChunk, TranscribeResponse__Output>;

/** The gateway's one door to the whisper worker. */
export class WhisperWorker implements ModelLister {
  readonly capability: Capability = 'whisper';
  readonly grpc: WhisperClient;

  constructor(endpoint: WorkerEndpoint, logger: Logger) {
    this.grpc = createClient(Whisper, endpoint.address, endpointClientOptions(endpoint, logger));
  }

  /** Opens the client stream; the caller sends the options, then the bytes, then finishes. */
  transcribe(ctx: CallContext): TranscriptionUpload {
    let call: ReturnType<WhisperClient['Transcribe']> | undefined;
    const response = new Promise<TranscribeResponse__Output>((resolve, reject) => {
      call = this.grpc.Transcribe(callMetadata(ctx), (error, result) => {
        if (error) reject(error);
        else if (result) resolve(result);
        else reject(new Error('empty response'));
      });
    });
    return new StreamSender(call!, response);
  }

  listModels(ctx: CallContext): Promise<ModelInfo__Output[]> {
    return listModelsOf(this.grpc, ctx);
  }
}
