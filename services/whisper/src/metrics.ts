// The whisper worker's Prometheus metrics, labelled by model where it applies.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createWhisperMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queueDepth: new Gauge({
      name: 'whisper_queue_depth',
      help: 'Transcriptions whose next window (or language detection) waits for a recognition pass.',
      registers,
    }),
    running: new Gauge({
      name: 'whisper_active_transcriptions',
      help: 'Windows being recognised now (every row of the passes running).',
      registers,
    }),
    uploads: new Gauge({
      name: 'whisper_uploads_in_progress',
      help: 'Transcription calls in progress: uploads being received (spooled), then decoded and recognised.',
      registers,
    }),
    spoolBytes: new Gauge({
      name: 'whisper_spool_bytes',
      help: 'Bytes of uploads spooled to disk now (at most WHISPER_SPOOL_MAX_BYTES).',
      registers,
    }),
    batchSize: new Histogram({
      name: 'whisper_batch_size',
      help: 'Windows recognised together in one pass (at most WHISPER_MAX_BATCH).',
      buckets: [1, 2, 3, 4, 6, 8, 12, 16, 32],
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
      help: 'Time a transcription waited for its upload to arrive and ffmpeg to decode it (recognition and waiting for a place not included).',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    recognitionSeconds: new Histogram({
      name: 'whisper_recognition_seconds',
      help: 'Duration of one recognition pass: the windows of one batch (whisper_batch_size) decoded together by the model.',
      labelNames: ['model'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
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
