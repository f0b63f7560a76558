// The whisper worker: the shared model-worker life (startModelWorker) with Whisper models, the
// transcription service and its metrics. Recognition takes turns in a batching queue of its own,
// so windows of several uploads share passes.
import { startModelWorker, type RunningModelWorker } from '@switchboard/models';
import type { Logger } from '@switchboard/telemetry';
import { loadWhisperModel } from './adapters/whisper-model.js';
import type { WhisperConfig } from './config.js';
import { createWhisperMetrics } from './metrics.js';
import { RecognitionQueue } from './recognition/recognition-queue.js';
import { whisperService } from './server.js';
import { TranscriptionService } from './transcription/service.js';

export function startWhisperWorker(config: WhisperConfig, logger: Logger): Promise<RunningModelWorker> {
  return startModelWorker(
    {
      name: 'whisper',
      config,
      createMetrics: createWhisperMetrics,
      load: (entry) => loadWhisperModel(entry, config.execution),
      dispose: (model) => model.dispose(),
      details: (model) => ({
        dtype: model.dtype,
        multilingual: model.multilingual,
        languages: [...model.languages].sort(),
      }),
      services: ({ models, metrics }) => {
        const maxTranscriptions = config.queue.concurrency + config.queue.depth;
        const recognition = new RecognitionQueue({
          concurrency: config.queue.concurrency,
          // Received uploads are admitted (and refused) by the transcription service; each has at
          // most maxBatch windows out, so no window is ever refused here.
          depth: maxTranscriptions * config.maxBatch,
          maxBatch: config.maxBatch,
          onDepth: (waiting, running) => {
            metrics.queueDepth.set(waiting);
            metrics.running.set(running);
          },
          onBatch: (windows) => metrics.batchSize.observe(windows),
          onPass: (model, _windows, seconds) =>
            metrics.recognitionSeconds.observe({ model: model.id }, seconds),
        });
        return [
          whisperService(
            new TranscriptionService(models, recognition, metrics, {
              ffmpegPath: config.ffmpegPath,
              maxAudioSeconds: config.maxAudioSeconds,
              spoolDir: config.spoolDir,
              spoolMaxBytes: config.spoolMaxBytes,
              spoolPerKeyBytes: config.spoolPerKeyBytes,
              windowing: config.windowing,
              maxTranscriptions,
              windowsInFlight: config.maxBatch,
            }),
          ),
        ];
      },
    },
    logger,
  );
}
