// The decoder against Debian's real ffmpeg (the set-up installs it): samples out of a WAV made
// here, invalid_audio for bytes that are not audio, payload_too_large past the duration limit,
// a clear error when the binary is missing, ffmpeg held back while the consumer is busy, and none
// of the worker's secrets in ffmpeg's environment.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSwitchboardError } from '@switchboard/errors';
import { createLogger } from '@switchboard/telemetry';
import { ByteBudget } from '../audio/byte-budget.js';
import { decodePcm, type DecodeOptions } from './ffmpeg-decoder.js';
import { toneWav } from './tone-wav.test-support.js';

const options = (overrides: Partial<DecodeOptions> = {}): DecodeOptions => ({
  ffmpegPath: 'ffmpeg',
  maxSeconds: 60,
  spool: { dir: tmpdir(), budget: new ByteBudget(1 << 30), retryAfterSeconds: () => 1 },
  logger: createLogger({ service: 'test', level: 'silent' }),
  signal: new AbortController().signal,
  ...overrides,
});

/** All samples of a decode, joined (fine for the short files here). */
async function decodeToPcm(input: Iterable<Uint8Array>, decode: DecodeOptions): Promise<Float32Array> {
  const chunks: Float32Array[] = [];
  for await (const chunk of decodePcm(input, decode)) chunks.push(chunk);
  const samples = new Float32Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    samples.set(chunk, at);
    at += chunk.length;
  }
  return samples;
}

/** The upload in small pieces, as the gRPC stream delivers it. */
const pieces = (bytes: Buffer, size = 4096) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

test('a 44.1 kHz WAV becomes 16 kHz mono float samples of the same duration and level', async () => {
  const samples = await decodeToPcm(pieces(toneWav(1.5, 44_100)), options());
  assert.ok(Math.abs(samples.length - 24_000) <= 16, String(samples.length));
  const peak = samples.reduce((max, x) => Math.max(max, Math.abs(x)), 0);
  assert.ok(Math.abs(peak - 16_000 / 32_768) < 0.02, `peak ${peak}`);
});

test('bytes that are not audio → invalid_audio', async () => {
  await assert.rejects(
    decodeToPcm(pieces(Buffer.from('this is a text file, not audio\n'.repeat(500))), options()),
    (error) => isSwitchboardError(error) && error.code === 'invalid_audio',
  );
});

test('audio longer than the limit → payload_too_large', async () => {
  await assert.rejects(
    decodeToPcm(pieces(toneWav(3, 16_000)), options({ maxSeconds: 1 })),
    (error) => isSwitchboardError(error) && error.code === 'payload_too_large',
  );
});

test('a missing ffmpeg binary is reported by its configured path', async () => {
  await assert.rejects(
    decodeToPcm(pieces(toneWav(0.1, 16_000)), options({ ffmpegPath: '/nonexistent/ffmpeg' })),
    /ffmpeg not found at "\/nonexistent\/ffmpeg"/,
  );
});

/** ffmpeg processes that are children of this test process. */
function ffmpegChildren(): number[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8');
  return children
    .split(' ')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg');
}

test('ffmpeg is held back while the consumer is busy, and is gone when the consumer stops', async () => {
  // 10 minutes decode to 38 MB of samples in well under a second when nothing holds ffmpeg back.
  const wav = toneWav(600, 16_000);
  const samples = decodePcm(pieces(wav, 64 * 1024), options({ maxSeconds: 3600 }));
  const first = await samples.next();
  assert.ok(!first.done && first.value.length > 0);
  const [pid] = ffmpegChildren();
  assert.ok(pid, 'ffmpeg runs while samples remain');
  await sleep(1000); // a generous second in which an unheld ffmpeg would write everything
  const written = Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
  assert.ok(written < 4 * 1024 * 1024, `ffmpeg wrote ${written} bytes while nothing was read`);
  await samples.return();
  assert.deepEqual(ffmpegChildren(), []);
});

test("ffmpeg, which parses tenants' uploads, gets none of the worker's secrets", async () => {
  const secret = 'cluster-secret-a3f9d27c0b6e4185';
  const saved = process.env.CLUSTER_SECRET;
  process.env.CLUSTER_SECRET = secret;
  try {
    const samples = decodePcm(pieces(toneWav(600, 16_000), 64 * 1024), options({ maxSeconds: 3600 }));
    await samples.next();
    const [pid] = ffmpegChildren();
    assert.ok(pid, 'ffmpeg runs while samples remain');
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(environ.some((entry) => entry.startsWith('PATH=')));
    assert.ok(!environ.some((entry) => entry.startsWith('CLUSTER_SECRET=') || entry.includes(secret)));
    await samples.return();
  } finally {
    if (saved === undefined) delete process.env.CLUSTER_SECRET;
    else process.env.CLUSTER_SECRET = saved;
  }
});
