// Tenant files that point ffmpeg at other files (an HLS playlist behind an ID3 tag, a bare
// playlist, a concat list, an SDP file) are refused by every decode path before ffmpeg runs, while
// the same files given to an unconfined ffmpeg do read the planted canary; real media still decode.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareAudio, prepareImage } from '../backends/avatar/prepare.js';
import { PermanentJobError } from '../backends/backend.js';
import { decodeAudio, decodeImage, decodeVideoFrames } from './decode.js';
import { UnsupportedMediaError } from './input.js';
import { probeMedia } from './probe.js';
import { defaultFfmpegPaths as paths } from './run-ffmpeg.js';

let dir = '';
const attacks: Record<string, string> = {};
const ffmpeg = (...args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args]);
const sine = ['-f', 'lavfi', '-i', 'sine=frequency=1234:duration=1'];
const size = { width: 16, height: 16, fit: 'stretch' } as const;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'animation-indirection-'));
  // The canaries: a distinctive tone in a playlist segment, and a WAV beside the upload.
  ffmpeg(...sine, '-c:a', 'mp2', '-f', 'mpegts', join(dir, 'canary.ts'));
  ffmpeg(...sine, join(dir, 'canary.wav'));
  const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${join(dir, 'canary.ts')}\n#EXT-X-ENDLIST\n`;
  const files: Record<string, Buffer> = {
    id3hls: Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]), Buffer.from(playlist)]),
    hls: Buffer.from(playlist),
    concat: Buffer.from("ffconcat version 1.0\nfile 'canary.wav'\n"),
    sdp: Buffer.from(
      'v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 5004 RTP/AVP 0\n',
    ),
  };
  for (const [name, bytes] of Object.entries(files)) {
    attacks[name] = join(dir, name);
    writeFileSync(attacks[name], bytes);
  }
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('the fixtures are live: an unconfined ffmpeg reads the canary through them', () => {
  for (const name of ['id3hls', 'concat']) {
    const out = ffmpeg('-i', attacks[name] ?? '', '-ac', '1', '-ar', '16000', '-f', 'f32le', 'pipe:1');
    assert.ok(out.length > 16000, `${name} read ${out.length} bytes`);
  }
});

test('every decode path refuses them without running ffmpeg', async () => {
  const signal = new AbortController().signal;
  for (const [name, path] of Object.entries(attacks)) {
    const refused = (error: unknown) => error instanceof UnsupportedMediaError;
    await assert.rejects(decodeAudio(paths, path, { sampleRate: 16000 }), refused, name);
    await assert.rejects(decodeImage(paths, path, size), refused, name);
    await assert.rejects(decodeVideoFrames(paths, path, size).next(), refused, name);
    for (const kind of ['image', 'video', 'audio'] as const) {
      await assert.rejects(probeMedia(paths, path, { kind }), refused, `${name} ${kind}`);
    }
    const job = (code: string) => (error: unknown) =>
      error instanceof PermanentJobError && error.code === code;
    await assert.rejects(prepareAudio(paths, path, dir, undefined, signal), job('invalid_audio'), name);
    await assert.rejects(prepareImage(paths, path, signal), job('invalid_request'), name);
  }
});

test('genuine WAV, MP3 (with its ID3 tag), MP4 and PNG still decode', async () => {
  const wav = join(dir, 'real.wav');
  const mp3 = join(dir, 'real.mp3');
  const mp4 = join(dir, 'real.mp4');
  const png = join(dir, 'real.png');
  ffmpeg(...sine, wav);
  ffmpeg(...sine, '-metadata', 'title=x', mp3);
  ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=32x32:rate=10:duration=1', ...sine, '-pix_fmt', 'yuv420p', mp4);
  ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=32x32', '-frames:v', '1', png);
  for (const path of [wav, mp3, mp4]) {
    const samples = await decodeAudio(paths, path, { sampleRate: 16000 });
    assert.ok(samples.length > 15000, `${path}: ${samples.length} samples`);
  }
  let frames = 0;
  for await (const frame of decodeVideoFrames(paths, mp4, size)) frames += frame.length > 0 ? 1 : 0;
  assert.equal(frames, 10);
  assert.equal((await decodeImage(paths, png, size)).length, 16 * 16 * 3);
  assert.equal((await probeMedia(paths, mp4, { kind: 'video' })).video?.width, 32);
  // Sent as what it is not: a WAV as the image, a PNG as the audio.
  await assert.rejects(decodeImage(paths, wav, size), UnsupportedMediaError);
  await assert.rejects(decodeAudio(paths, png, { sampleRate: 16000 }), UnsupportedMediaError);
});
