// The whisper worker's limits on what uploads may hold (docs/security.md), through the gateway:
// uploads still arriving are spooled and take no recognition place, so more of them than the
// queue holds are still all answered; their bytes count against a budget per key (past it 503
// no_capacity while the key's other uploads hold it, 413 for an upload larger than it alone) and
// one shared by all on disk, past which an upload is refused and its partial file removed.
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { loopedSpeech, toneWav } from '../support/audio.js';
import { descendantsNamed } from '../support/processes.js';
import { errorOf, startStack, type Stack, until } from '../support/stack.js';
import {
  startWorker,
  tinyWhisperRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

/** One recognition slot and one waiting place: two transcriptions decoded and recognised at once. */
const CONCURRENCY = 1;
const QUEUE_DEPTH = 1;
const SPOOL_MAX_BYTES = 256 * 1024;
const SPOOL_PER_KEY_BYTES = 240 * 1024;

let repo: TinyModelRepository;
let spoolDir: string;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;
let otherKey: CreatedKey;
let m4a: Buffer;

before(async () => {
  [repo, spoolDir, m4a] = await Promise.all([
    tinyWhisperRepository(),
    mkdtemp(join(tmpdir(), 'whisper-spool-')),
    // ≈ 160-200 KB: fits the spool alone (and a key's part of it), not next to most of another one.
    loopedSpeech(40, 'speech.m4a', ['-c:a', 'aac', '-b:a', '32k']),
  ]);
  worker = await startWorker('whisper', {
    env: {
      MODEL_DIR: repo.modelDir,
      WHISPER_CONCURRENCY: String(CONCURRENCY),
      WHISPER_QUEUE_DEPTH: String(QUEUE_DEPTH),
      WHISPER_SPOOL_DIR: spoolDir,
      WHISPER_SPOOL_MAX_BYTES: String(SPOOL_MAX_BYTES),
      WHISPER_SPOOL_PER_KEY_BYTES: String(SPOOL_PER_KEY_BYTES),
    },
  });
  stack = await startStack({ env: { WHISPER_ADDR: worker.address } });
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
  otherKey = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await stack?.stop();
  await worker?.stop();
  await Promise.all([repo?.remove(), spoolDir && rm(spoolDir, { recursive: true, force: true })]);
});

function transcribe(file: Buffer, name: string, as = key): Promise<Response> {
  const form = new FormData();
  form.append('language', 'en');
  form.append('file', new Blob([file]), name);
  return fetch(`${stack.gateway.url}/transcribe`, { method: 'POST', headers: bearer(as.key), body: form });
}

/**
 * An upload whose client sends `head` of `file` and then holds the rest until `finish()`: an
 * upload in progress for as long as the test needs, with no timing involved.
 */
function heldUpload(file: Buffer, name: string, head: number, as = key) {
  const boundary = `----switchboard${Math.random().toString(16).slice(2)}`;
  const encoder = new TextEncoder();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`,
        ),
      );
      controller.enqueue(file.subarray(0, head));
    },
    async pull(controller) {
      await released;
      controller.enqueue(file.subarray(head));
      controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
      controller.close();
    },
  });
  const response = fetch(`${stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: { ...bearer(as.key), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  });
  // Seen by the test through finish(); a test that fails first must not leave it unhandled.
  void response.catch(() => undefined);
  return {
    response,
    finish: async () => {
      release();
      return response;
    },
  };
}

const ffmpegProcesses = () => descendantsNamed(worker.child.pid!, 'ffmpeg');

/** Every file under the spool directory with its size. */
const spooled = () =>
  readdirSync(spoolDir).flatMap((dir) =>
    readdirSync(join(spoolDir, dir)).map((file) => statSync(join(spoolDir, dir, file)).size),
  );

async function assertNoCapacity(res: Response): Promise<void> {
  assert.equal(res.status, 503, await res.clone().text());
  assert.equal((await errorOf(res)).code, 'no_capacity');
  assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
}

test('uploads still arriving hold no recognition place: more of them than places, all answered', async () => {
  // Three uploads in progress (the queue has two places), each with 16 KB of a 2-s file sent so far.
  const wav = toneWav(2);
  const held = ['a.wav', 'b.wav', 'c.wav'].map((name) => heldUpload(wav, name, 16 * 1024));
  await until(() => spooled().length === 3, 'the three uploads are being spooled', 15_000);
  assert.equal(await worker.metric('whisper_uploads_in_progress'), 3);
  assert.deepEqual(ffmpegProcesses(), [], 'nothing is decoded before an upload has arrived whole');

  // A complete upload is recognised at once, from the same key and from another.
  assert.equal((await transcribe(toneWav(1), 'd.wav')).status, 200);
  assert.equal((await transcribe(toneWav(1), 'e.wav', otherKey)).status, 200);

  for (const upload of held) assert.equal((await upload.finish()).status, 200);
  assert.equal(await worker.metric('whisper_uploads_in_progress'), 0);
  assert.equal(await worker.metric('whisper_spool_bytes'), 0);
});

test("a key's spool budget: past it → 503 no_capacity beside its other uploads, 413 alone", async () => {
  // 215 KB of one key's 7-s upload are spooled and stay while its client holds the rest: with
  // 32 KB more, that key is past its 240 KB.
  const head = 215 * 1024;
  const first = heldUpload(toneWav(7), 'first.wav', head);
  await until(() => spooled().some((size) => size > head - 64 * 1024), 'the first upload is spooled', 15_000);

  await assertNoCapacity(await transcribe(toneWav(1), 'more.wav'));
  // Another key has a budget of its own.
  assert.equal((await transcribe(toneWav(1), 'other.wav', otherKey)).status, 200);
  assert.equal(spooled().length, 1, 'the refused upload leaves nothing in the spool');

  const res = await first.finish();
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal((await transcribe(toneWav(1), 'more.wav')).status, 200, 'the key has room again');

  // Larger than a key may hold (within the spool's budget): waiting would not help.
  const tooLarge = await transcribe(toneWav(8), 'large.wav', otherKey);
  assert.equal(tooLarge.status, 413, await tooLarge.clone().text());
  assert.equal((await errorOf(tooLarge)).code, 'payload_too_large');
  assert.deepEqual(readdirSync(spoolDir), []);
});

test('the spool byte budget: an upload past it → 503 no_capacity, nothing of it left on disk', async () => {
  assert.ok(
    m4a.length < SPOOL_PER_KEY_BYTES && m4a.length > SPOOL_MAX_BYTES / 2,
    `m4a of ${m4a.length} bytes`,
  );
  // The first upload's bytes so far are spooled and stay there while its client holds the rest.
  const head = m4a.length - 1024;
  const first = heldUpload(m4a, 'first.m4a', head);
  await until(() => spooled().some((size) => size > head - 64 * 1024), 'the first upload is spooled', 15_000);

  // Alone it would fit; next to the first (another key's) it does not.
  await assertNoCapacity(await transcribe(m4a, 'second.m4a', otherKey));
  assert.equal(spooled().length, 1, 'the refused upload’s partial file is removed');

  const res = await first.finish();
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(readdirSync(spoolDir), [], 'the spool is empty once the transcription ended');
  assert.equal(await worker.metric('whisper_spool_bytes'), 0);
  // The budget was given back: the same file now fits.
  assert.equal((await transcribe(m4a, 'again.m4a')).status, 200);
  assert.deepEqual(readdirSync(spoolDir), []);
});
