// The whisper worker's memory stays bounded by the window, not the file (docs/security.md): four
// 10-minute Opus files (≈ 0.6 MB each, ≈ 38 MB of decoded samples each) uploaded at once through
// the gateway. A worker that kept whole files held 4 × 38 MB of samples, twice that while joining
// them (its peak grew by 272 MB here); one that recognises windows as ffmpeg produces them holds a
// few MB per upload (25 MB in all, measured on 2 cores). Batched passes add a fixed cost per pass,
// not per upload or per minute of audio: the encoder's activations for each extra window of a pass.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { loopedSpeech } from '../support/audio.js';
import { startStack, type Stack } from '../support/stack.js';
import {
  startWorker,
  tinyWhisperRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';
import { peakRss } from '../support/processes.js';

const UPLOADS = 4;
const SECONDS = 10 * 60;
const MB = 1024 * 1024;
/** Windows per pass (WHISPER_MAX_BATCH); each upload also keeps up to this many windows in flight. */
const MAX_BATCH = 4;
/**
 * What each window of a pass beyond the first adds to ONNX Runtime's arena: the encoder's
 * self-attention scores and their softmax, 2 × heads (4 in the tiny model) × 1500² floats, 72 MB
 * (measured: +92 MB for passes of 2, +212 MB for passes of 4, over passes of one window). The
 * warm-up tries to fill a whole pass so that this is part of the baseline; what it could not fill
 * is added to the bound, since the uploads may fill it.
 */
const PASS_WINDOW_BYTES = 2 * 4 * 1500 * 1500 * 4;
/**
 * What the uploads may add to the worker's peak resident memory, over its peak after the warm-up
 * (model, ORT arenas for the largest pass seen, JIT). Per upload: the 30-s window (1.9 MB of f32),
 * its log-mel features (1 MB), ffmpeg's pipe and stream buffers and the gRPC/HTTP/2 windows
 * (≈ 1 MB) — about 4 MB, so 16 MB for four; its other windows in flight (up to MAX_BATCH − 1 more,
 * 1.9 MB each, with features while in a pass), which four uploads' windows share with the 80 MB
 * for garbage between collections, whose timing varies with the machine's load (measured here:
 * +35 to +52 MB in all). Whole decoded files added 272 MB here before windows were streamed.
 */
const UPLOAD_BOUND = 96 * MB;
/** Warm-up rounds at most, each four 2-minute uploads at once, until one pass held MAX_BATCH windows. */
const WARM_UP_ROUNDS = 3;

let repo: TinyModelRepository;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;
let opus: Buffer;

before(async () => {
  [repo, opus] = await Promise.all([
    tinyWhisperRepository(),
    loopedSpeech(SECONDS, 'long.ogg', ['-c:a', 'libopus', '-b:a', '8k']),
  ]);
  worker = await startWorker('whisper', {
    env: {
      MODEL_DIR: repo.modelDir,
      WHISPER_CONCURRENCY: '1',
      WHISPER_MAX_BATCH: String(MAX_BATCH),
      WHISPER_QUEUE_DEPTH: String(UPLOADS),
    },
  });
  stack = await startStack({ env: { WHISPER_ADDR: worker.address } });
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await stack?.stop();
  await worker?.stop();
  await repo?.remove();
});

async function transcribe(file: Buffer, name: string): Promise<{ duration_s: number; text: string }> {
  const form = new FormData();
  form.append('language', 'en');
  form.append('format', 'json');
  form.append('file', new Blob([file]), name);
  const res = await fetch(`${stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { duration_s: number; text: string };
}

/** The most windows any pass so far recognised together, read from the worker's histogram. */
async function largestPass(): Promise<number> {
  const passes = await worker.metric('whisper_batch_size_count');
  for (let size = 1; size < MAX_BATCH; size++) {
    if ((await worker.metric('whisper_batch_size_bucket', { le: String(size) })) === passes) return size;
  }
  return MAX_BATCH;
}

test(`${UPLOADS} parallel ${SECONDS / 60}-minute Opus uploads: peak RSS grows by the windows in flight, not the files`, async (t) => {
  assert.ok(opus.length < 2 * MB, `a low-bitrate file (${opus.length} bytes)`);
  // Warm-up with the same shape of load, shorter, so the model's arenas for a full pass and the
  // JIT are part of the baseline.
  const warm = await loopedSpeech(120, 'warm.ogg', ['-c:a', 'libopus', '-b:a', '8k']);
  for (let round = 0; round < WARM_UP_ROUNDS && (await largestPass()) < MAX_BATCH; round++) {
    await Promise.all(Array.from({ length: UPLOADS }, (_, i) => transcribe(warm, `warm-${i}.ogg`)));
  }
  const warmPass = await largestPass();
  const bound = UPLOAD_BOUND + (MAX_BATCH - warmPass) * PASS_WINDOW_BYTES;
  const pid = worker.child.pid!;
  const baseline = peakRss(pid);

  const results = await Promise.all(
    Array.from({ length: UPLOADS }, (_, i) => transcribe(opus, `long-${i}.ogg`)),
  );
  const grown = peakRss(pid) - baseline;
  t.diagnostic(
    `worker VmHWM: ${(baseline / MB).toFixed(1)} MB after a warm-up whose largest pass held ${warmPass} windows, +${(grown / MB).toFixed(1)} MB`,
  );
  for (const body of results) {
    // The whole file was decoded and recognised, not just its start.
    assert.ok(Math.abs(body.duration_s - SECONDS) < 1, String(body.duration_s));
    assert.ok(body.text.length > 0);
  }
  assert.ok(
    grown < bound,
    `peak RSS grew by ${(grown / MB).toFixed(1)} MB for ${UPLOADS} uploads (bound ${(bound / MB).toFixed(0)} MB)`,
  );
});
