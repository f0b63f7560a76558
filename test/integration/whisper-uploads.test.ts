// The whisper path's behaviour under stress: uploads over the tier limit (refused without the
// gateway holding them), clients that vanish mid-upload (nothing of them left in the worker's
// spool, no ffmpeg), and a model that is still loading (503 model_loading with Retry-After).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { wavHeader } from '../support/audio.js';
import { spawnGateway, type GatewayProcess } from '../support/gateway.js';
import { descendantsNamed, peakRss } from '../support/processes.js';
import { errorOf, sleep, startWorkerWithGateway, startStack, type Stack, until } from '../support/stack.js';
import {
  startWorker,
  tinyWhisperRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

const UPLOAD_LIMIT = 8 * 1024 * 1024;
let repo: TinyModelRepository;
let spoolDir: string;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  repo = await tinyWhisperRepository();
  spoolDir = await mkdtemp(join(tmpdir(), 'whisper-spool-'));
  worker = await startWorker('whisper', { env: { MODEL_DIR: repo.modelDir, WHISPER_SPOOL_DIR: spoolDir } });
  stack = await startStack({
    env: {
      WHISPER_ADDR: worker.address,
      TIER_POLICIES: JSON.stringify({ basic: { upload_limit_bytes: UPLOAD_LIMIT } }),
    },
  });
  key = await createKey(stack.gateway, { tier: 'basic', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await stack?.stop();
  await worker?.stop();
  await Promise.all([repo?.remove(), spoolDir && rm(spoolDir, { recursive: true, force: true })]);
});

/** Quiet 16-bit noise: bytes ffmpeg decodes as audio, made once and reused for every chunk. */
const noise = Uint8Array.from({ length: 256 * 1024 }, (_, i) => (i * 7919) & 0x0f);

/**
 * A multipart upload sent as a stream (chunked, no Content-Length), so only the gateway's
 * streamed count can notice its size: `chunks` pieces of `chunkBytes` after a WAV header.
 */
function streamedUpload(options: {
  chunks: number;
  chunkBytes: number;
  delayMs?: number;
  signal?: AbortSignal;
  gateway?: GatewayProcess;
}) {
  const boundary = `----switchboard${Date.now()}`;
  const encoder = new TextEncoder();
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.wav"\r\n` +
            `Content-Type: audio/wav\r\n\r\n`,
        ),
      );
      controller.enqueue(wavHeader(3600));
    },
    async pull(controller) {
      if (options.delayMs) await sleep(options.delayMs);
      // fetch does not cancel a request body when the request is aborted; stop producing here.
      if (options.signal?.aborted) {
        controller.close();
        return;
      }
      if (sent++ < options.chunks) {
        controller.enqueue(noise.slice(0, options.chunkBytes));
      } else {
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
        controller.close();
      }
    },
  });
  return fetch(`${(options.gateway ?? stack.gateway).url}/transcribe`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    signal: options.signal,
    duplex: 'half',
  });
}

const ffmpegProcesses = () => descendantsNamed(worker.child.pid!, 'ffmpeg');

test('an upload over the tier limit → 413 while it streams; the gateway never holds it', async (t) => {
  // A gateway process of its own: its peak memory is what this test measures.
  const gateway = await spawnGateway(stack.gatewayEnv);
  t.after(() => gateway.stop());
  const stopSending = new AbortController();
  const gatewayPid = gateway.child.pid!;
  const before = peakRss(gatewayPid);
  // 256 MB: a gateway that held uploads would grow by that much; one that streams them grows by
  // its buffers and the garbage of the chunks it drained after refusing, whatever the size.
  const total = 32 * UPLOAD_LIMIT;
  const res = await streamedUpload({
    chunks: total / noise.length,
    chunkBytes: noise.length,
    signal: stopSending.signal,
    gateway,
  }).catch((error: unknown) => error);
  // The gateway answers 413 as soon as the limit is crossed; a client still sending may instead
  // see its request cut off, which is as good a refusal.
  if (res instanceof Response) {
    assert.equal(res.status, 413);
    assert.equal((await errorOf(res)).code, 'payload_too_large');
  }
  // The client may still be sending the rest; stop it, or its socket outlives the test.
  stopSending.abort();
  const grown = peakRss(gatewayPid) - before;
  assert.ok(grown < total / 4, `gateway peak memory grew by ${grown} bytes for a ${total}-byte upload`);
  await until(() => ffmpegProcesses().length === 0, 'the refused upload’s ffmpeg is gone');
});

test('a client that disconnects mid-upload leaves nothing in the spool and no ffmpeg behind', async () => {
  const abort = new AbortController();
  const upload = streamedUpload({
    chunks: 10_000,
    chunkBytes: 16 * 1024,
    delayMs: 20,
    signal: abort.signal,
  }).catch((error: unknown) => error);
  // The upload is spooled while it arrives; it is decoded only once it has arrived whole.
  await until(() => readdirSync(spoolDir).length > 0, 'the worker spools the upload');
  abort.abort();
  assert.ok((await upload) instanceof Error);
  await until(() => readdirSync(spoolDir).length === 0, 'the spooled upload is removed', 5_000);
  assert.deepEqual(ffmpegProcesses(), []);
  assert.equal(await worker.metric('whisper_spool_bytes'), 0);
  // The worker is still healthy and serves the next upload.
  const res = await streamedUpload({ chunks: 4, chunkBytes: 32_000 });
  assert.equal(res.status, 200, await res.clone().text());
});

test('while the model loads: /transcribe → 503 model_loading with Retry-After', async () => {
  const loading = await startWorkerWithGateway(
    'whisper',
    stack,
    {
      MODEL_DIR: repo.modelDir,
      WHISPER_LOAD_DELAY_MS: '60000',
      WHISPER_LOADING_RETRY_AFTER_SECONDS: '7',
    },
    { waitServing: false },
  );
  const { gateway } = loading;
  try {
    const form = new FormData();
    form.append('file', new Blob([wavHeader(1), Buffer.alloc(32_000)]), 'a.wav');
    const res = await fetch(`${gateway.url}/transcribe`, {
      method: 'POST',
      headers: bearer(key.key),
      body: form,
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '7');
    assert.equal((await errorOf(res)).code, 'model_loading');
    const models = (await (await fetch(`${gateway.url}/models`, { headers: bearer(key.key) })).json()) as {
      data: { capability: string; status: string }[];
    };
    assert.deepEqual(
      models.data.filter((m) => m.capability === 'whisper').map((m) => m.status),
      ['loading'],
    );
  } finally {
    await loading.stop();
  }
});
