// The whisper worker's Prometheus metrics (API.md §8), labelled by model where it applies.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createWhisperMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queueDepth: new Gauge({
      name: 'whisper_queue_depth',
      help: 'Decoded uploads waiting for a recognition slot.',
      registers,
    }),
    running: new Gauge({
      name: 'whisper_active_transcriptions',
      help: 'Recognitions running now.',
      registers,
    }),
    audioSeconds: new Counter({
      name: 'whisper_audio_seconds_total',
      help: 'Seconds of audio transcribed.',
      labelNames: ['model'],
      registers,
    }),
    realTimeFactor: new Histogram({
      name: 'whisper_real_time_factor',
      help: 'Audio seconds recognised per wall-clock second of recognition (higher is faster).',
      labelNames: ['model'],
      buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200],
      registers,
    }),
    decodeSeconds: new Histogram({
      name: 'whisper_decode_seconds',
      help: 'Time ffmpeg took to receive and decode an upload.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    requests: new Counter({
      name: 'whisper_transcriptions_total',
      help: 'Finished transcription calls by outcome (ok, invalid_audio, cancelled, error, …).',
      labelNames: ['model', 'outcome'],
      registers,
    }),
  };
}

export type WhisperMetrics = ReturnType<typeof createWhisperMetrics>;
