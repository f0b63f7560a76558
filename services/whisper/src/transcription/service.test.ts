// A transcription's spans, with the real tiny random-weight Whisper and Debian's ffmpeg: receiving
// the upload, decoding it and recognising each window are spans of the call's trace, the pass
// durations reach whisper_recognition_seconds, and audio that is no audio fails the upload span.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { TranscribeChunk__Output } from '@switchboard/contracts';
import type { RequestContext } from '@switchboard/grpc';
import type { ModelRegistry } from '@switchboard/models';
import { createLogger, withSpan } from '@switchboard/telemetry';
import { captureSpans } from '@switchboard/telemetry/test-support';
import { Registry } from 'prom-client';
import { loadTinyWhisper, type TinyWhisper } from '../adapters/tiny-whisper.test-support.js';
import { toneWav } from '../adapters/tone-wav.test-support.js';
import { createWhisperMetrics } from '../metrics.js';
import { RecognitionQueue } from '../recognition/recognition-queue.js';
import type { SpeechModel } from '../recognition/speech-model.js';
import { TranscriptionService } from './service.js';

let tiny: TinyWhisper;
let spoolDir: string;
before(async () => {
  tiny = await loadTinyWhisper();
  spoolDir = await mkdtemp(join(tmpdir(), 'whisper-service-'));
});
after(async () => {
  await tiny?.remove();
  await rm(spoolDir, { recursive: true, force: true });
});

async function* messages(bytes: Buffer): AsyncGenerator<TranscribeChunk__Output> {
  yield {
    options: { model: 'tiny', language: 'en', format: 'json' },
    kind: 'options',
  } as TranscribeChunk__Output;
  for (let at = 0; at < bytes.length; at += 16_384) {
    yield { data: bytes.subarray(at, at + 16_384), kind: 'data' };
  }
}

function setup() {
  const promRegistry = new Registry();
  const metrics = createWhisperMetrics(promRegistry);
  const registry = {
    get: () => ({ id: 'tiny', handle: tiny.model }),
  } as unknown as ModelRegistry<SpeechModel>;
  const recognition = new RecognitionQueue({
    concurrency: 1,
    depth: 16,
    maxBatch: 2,
    onPass: (model, _windows, seconds) => metrics.recognitionSeconds.observe({ model: model.id }, seconds),
  });
  const service = new TranscriptionService(registry, recognition, metrics, {
    ffmpegPath: 'ffmpeg',
    maxAudioSeconds: 600,
    spoolDir,
    spoolMaxBytes: 1 << 30,
    spoolPerKeyBytes: 1 << 30,
    windowing: { chunkSeconds: 30, strideSeconds: 5 },
    maxTranscriptions: 2,
    windowsInFlight: 2,
  });
  return { service, promRegistry };
}

const context = (): RequestContext =>
  ({
    requestId: 'test',
    keyId: 'key',
    logger: createLogger({ service: 'test', level: 'silent' }),
    signal: new AbortController().signal,
  }) as RequestContext;

test('upload, decode and every window are spans of the call; passes reach whisper_recognition_seconds', async () => {
  const spans = captureSpans();
  const { service, promRegistry } = setup();
  // 45 s: two windows (0–30 s, 20–45 s).
  const call = await withSpan('test', 'transcribe call', {}, async (span) => {
    await service.transcribe(messages(toneWav(45, 16_000, 4_500)), context());
    return span.spanContext();
  });
  for (const name of ['whisper.upload', 'whisper.decode']) {
    const [span, ...more] = spans.named(name);
    assert.ok(span && more.length === 0, `one ${name} span`);
    assert.equal(span.parentSpanId, call.spanId, `${name} is a child of the call`);
  }
  assert.equal(spans.named('whisper.decode')[0]!.attributes['whisper.audio_seconds'], 45);
  const windows = spans.named('whisper.recognize');
  assert.equal(windows.length, 2);
  assert.ok(windows.every((span) => span.parentSpanId === call.spanId && span.traceId === call.traceId));
  const [passes] = (await promRegistry.getSingleMetric('whisper_recognition_seconds')!.get()).values.filter(
    (value) => (value as { metricName?: string }).metricName === 'whisper_recognition_seconds_count',
  );
  assert.ok(passes && passes.value >= 1, 'recognition passes are timed');
  assert.equal(passes.labels['model'], 'tiny');
});

test('bytes that are no audio fail the upload span', async () => {
  const spans = captureSpans();
  const { service } = setup();
  await assert.rejects(service.transcribe(messages(Buffer.alloc(64 * 1024, 7)), context()));
  const [upload] = spans.named('whisper.upload');
  assert.ok(upload);
  assert.equal(upload.statusCode, 2);
  assert.equal(spans.named('whisper.recognize').length, 0);
});
