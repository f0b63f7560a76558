// Uploads that point ffmpeg at other files on the worker (an HLS playlist behind an ID3 tag or an
// `ftyp` box, a bare playlist, a concat list, an SDP file) are refused as invalid_audio without
// the planted canary tone ever coming out; real WAV, MP3 (ID3-tagged) and M4A still decode.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { createLogger } from '@switchboard/telemetry';
import { ByteBudget } from '../audio/byte-budget.js';
import { decodePcm, type DecodeOptions } from './ffmpeg-decoder.js';

let dir = '';
const ffmpeg = (...args: string[]) => execFileSync('ffmpeg', ['-v', 'error', '-y', ...args]);
const sine = ['-f', 'lavfi', '-i', 'sine=frequency=1234:duration=1'];

const options = (): DecodeOptions => ({
  ffmpegPath: 'ffmpeg',
  maxSeconds: 60,
  spool: { dir, budget: new ByteBudget(1 << 30), retryAfterSeconds: () => 1 },
  logger: createLogger({ service: 'test', level: 'silent' }),
  signal: new AbortController().signal,
});

async function sampleCount(bytes: Buffer): Promise<number> {
  let count = 0;
  const pieces = [bytes.subarray(0, 7), bytes.subarray(7)];
  for await (const chunk of decodePcm(pieces, options())) count += chunk.length;
  return count;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'whisper-indirection-'));
  ffmpeg(...sine, '-c:a', 'mp2', '-f', 'mpegts', join(dir, 'canary.ts'));
  ffmpeg(...sine, join(dir, 'canary.wav'));
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('indirection files are refused as invalid_audio', async () => {
  const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n${join(dir, 'canary.ts')}\n#EXT-X-ENDLIST\n`;
  const uploads: Record<string, Buffer> = {
    id3hls: Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]), Buffer.from(playlist)]),
    // Spooled to a file (it starts like MP4), where the file protocol is open to ffmpeg.
    ftyphls: Buffer.concat([Buffer.from([0, 0, 0, 12]), Buffer.from('ftypisom'), Buffer.from(playlist)]),
    hls: Buffer.from(playlist),
    concat: Buffer.from(`ffconcat version 1.0\nfile '${join(dir, 'canary.wav')}'\n`),
    sdp: Buffer.from(
      'v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 5004 RTP/AVP 0\n',
    ),
  };
  for (const [name, bytes] of Object.entries(uploads)) {
    await assert.rejects(
      sampleCount(bytes),
      (error: unknown) => isSwitchboardError(error) && error.code === 'invalid_audio',
      name,
    );
  }
});

test('genuine WAV, MP3 with an ID3 tag and M4A still decode', async () => {
  for (const [file, extra] of [
    ['real.wav', []],
    ['real.mp3', ['-metadata', 'title=x']],
    ['real.m4a', ['-c:a', 'aac']],
  ] as const) {
    ffmpeg(...sine, ...extra, join(dir, file));
    const count = await sampleCount(readFileSync(join(dir, file)));
    assert.ok(count > 15000, `${file}: ${count} samples`);
  }
});
