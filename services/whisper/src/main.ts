// The whisper worker: the shared model-worker life (libs/models runModelWorker) with Whisper
// models, the transcription service and its metrics.
import { ConfigError } from '@switchboard/config';
import { runModelWorker } from '@switchboard/models';
import { loadWhisperModel } from './adapters/whisper-model.js';
import { loadWhisperConfig } from './config.js';
import { createWhisperMetrics } from './metrics.js';
import { whisperService } from './server.js';
import { TranscriptionService } from './transcription/service.js';

async function main(): Promise<void> {
  const config = loadWhisperConfig();
  await runModelWorker({
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
    services: ({ models, queue, metrics }) => [
      whisperService(
        new TranscriptionService(models, queue, metrics, {
          ffmpegPath: config.ffmpegPath,
          maxAudioSeconds: config.maxAudioSeconds,
          spoolDir: config.spoolDir,
          spoolMaxBytes: config.spoolMaxBytes,
          windowing: config.windowing,
          maxUploads: config.queue.concurrency + config.queue.depth,
        }),
      ),
    ],
  });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`,
  );
  process.exit(1);
});
