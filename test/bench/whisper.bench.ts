// pnpm bench:whisper — real-time factor (audio seconds per wall-clock second) of the whisper worker
// on the tiny development model and a 45-second file: (a) in-process, the same ffmpeg decoding and
// model adapter without gRPC or HTTP; (b) POST /transcribe through the gateway; then aggregate
// real-time factor with 1, 2 and 4 concurrent uploads. Numbers, not assertions.
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { useLocalModels } from '@switchboard/models';
import { createLogger } from '@switchboard/telemetry';
import { decodePcm } from '@switchboard/whisper/dist/adapters/ffmpeg-decoder.js';
import { loadWhisperModel } from '@switchboard/whisper/dist/adapters/whisper-model.js';
import { ByteBudget } from '@switchboard/whisper/dist/audio/byte-budget.js';
import { recognizeWindows } from '@switchboard/whisper/dist/recognition/recognize-windows.js';
import { streamWindows } from '@switchboard/whisper/dist/recognition/windows.js';
import { bearer, createKey } from '../support/admin.js';
import { makeAudioFixtures } from '../support/audio.js';
import { startStack } from '../support/stack.js';
import { startWorker, tinyWhisperRepository } from '../support/worker.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const windowing = { chunkSeconds: 30, strideSeconds: 5 };

async function timed(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up: JIT, ORT arenas, sockets
  const started = performance.now();
  for (let i = 0; i < runs; i++) await fn();
  return (performance.now() - started) / runs / 1000;
}

const [repo, audio] = await Promise.all([tinyWhisperRepository(), makeAudioFixtures(45)]);
const worker = await startWorker('whisper', {
  env: { MODEL_DIR: repo.modelDir, WHISPER_CONCURRENCY: '1', WHISPER_QUEUE_DEPTH: '16', LOG_LEVEL: 'error' },
});
const stack = await startStack({ env: { WHISPER_ADDR: worker.address, LOG_LEVEL: 'error' } });
try {
  const key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 1_000_000 });
  const seconds = audio.longSeconds;

  // (a) In-process: the worker's decoder and model adapter, called directly.
  useLocalModels(resolve(repo.modelDir, 'whisper'));
  const model = await loadWhisperModel(
    { id: repo.modelId, dir: '', description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
  const logger = createLogger({ service: 'bench', level: 'error' });
  const inProcess = await timed(async () => {
    const signal = new AbortController().signal;
    const pcm = decodePcm([audio.long], {
      ffmpegPath: 'ffmpeg',
      maxSeconds: 7200,
      spool: { dir: tmpdir(), budget: new ByteBudget(1024 ** 3), retryAfterSeconds: () => 1 },
      logger,
      signal,
    });
    await recognizeWindows(streamWindows(pcm, windowing, 16_000), {
      choose: () => ({ model, language: 'en' }),
      signal,
    });
  });

  // (b) Through the gateway: multipart upload, gRPC client stream, JSON answer.
  const upload = async () => {
    const form = new FormData();
    form.append('file', new Blob([audio.long]), 'long.wav');
    form.append('language', 'en');
    form.append('format', 'json');
    const res = await fetch(`${stack.gateway.url}/transcribe`, {
      method: 'POST',
      headers: bearer(key.key),
      body: form,
    });
    if (res.status !== 200) throw new Error(`transcribe: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  const gateway = await timed(upload);

  const rows = [
    {
      path: '(a) in-process',
      'seconds per file': inProcess.toFixed(3),
      'real-time factor': (seconds / inProcess).toFixed(1),
    },
    {
      path: '(b) gateway',
      'seconds per file': gateway.toFixed(3),
      'real-time factor': (seconds / gateway).toFixed(1),
      'of in-process': `${Math.round((inProcess / gateway) * 100)}%`,
    },
  ];

  const concurrency = [];
  for (const clients of [1, 2, 4]) {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let i = 0; i < runs; i++) await upload();
      }),
    );
    const wall = (performance.now() - started) / 1000;
    concurrency.push({
      uploads: clients,
      'aggregate real-time factor': ((clients * runs * seconds) / wall).toFixed(1),
    });
  }

  process.stdout.write(
    `\nwhisper bench: tiny development model, ${seconds.toFixed(1)}-s WAV, ${runs} runs, CPU\n`,
  );
  console.table(rows);
  console.table(concurrency);
  await model.dispose();
} finally {
  await stack.stop();
  await worker.stop();
  await Promise.all([repo.remove(), audio.remove()]);
}
