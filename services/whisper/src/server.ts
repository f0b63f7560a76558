// Wiring only: which method of the transcription service answers which RPC.
import { defineService, type ServiceRegistration } from '@switchboard/grpc';
import type { TranscriptionService } from './transcription/service.js';

export function whisperService(transcriptions: TranscriptionService): ServiceRegistration {
  return defineService('Whisper', {
    Transcribe: (messages, ctx) => transcriptions.transcribe(messages, ctx),
    ListModels: async () => transcriptions.listModels(),
  });
}
