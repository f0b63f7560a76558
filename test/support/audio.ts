// Audio fixtures made at test time with Debian's espeak-ng (speech) and ffmpeg (every container),
// so no recording is committed and every codec the tests claim is really produced by its encoder.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool as run } from './processes.js';

const SPEECH =
  'The quick brown fox jumps over the lazy dog. ' +
  'Switchboard turns speech into text, subtitles and timed segments. ' +
  'Every container that the decoder reads should give the same words.';

/** Container → ffmpeg output arguments (codec chosen explicitly, so the test says what it means). */
export const containers = {
  wav: ['-c:a', 'pcm_s16le'],
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k'],
  m4a: ['-c:a', 'aac', '-b:a', '64k'],
  ogg: ['-c:a', 'libopus', '-b:a', '32k'],
  flac: ['-c:a', 'flac'],
  webm: ['-c:a', 'libopus', '-b:a', '32k'],
} as const;
export type Container = keyof typeof containers;

export interface AudioFixtures {
  dir: string;
  /** A few seconds of synthetic English speech in `container`. */
  speech(container: Container): Promise<Buffer>;
  speechSeconds: number;
  /** The speech looped to exactly `LONG_SECONDS` (WAV). */
  long: Buffer;
  longSeconds: number;
  /** Three seconds of digital silence (WAV). */
  silence: Buffer;
  remove(): Promise<void>;
}

const ffmpeg = (...args: string[]) =>
  run('ffmpeg', ['-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...args]);

export async function duration(path: string): Promise<number> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration',
    '-of',
    'csv=p=0',
    path,
  ]);
  return Number(stdout.trim());
}

export async function makeAudioFixtures(longSeconds = 45): Promise<AudioFixtures> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-audio-'));
  const speechWav = join(dir, 'speech-source.wav');
  await run('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', speechWav, SPEECH]);
  const longWav = join(dir, 'long.wav');
  await ffmpeg(
    '-stream_loop',
    '-1',
    '-i',
    speechWav,
    '-t',
    String(longSeconds),
    '-ar',
    '16000',
    '-ac',
    '1',
    longWav,
  );
  const silenceWav = join(dir, 'silence.wav');
  await ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '3', silenceWav);
  const made = new Map<Container, Buffer>();
  return {
    dir,
    speechSeconds: await duration(speechWav),
    async speech(container) {
      let bytes = made.get(container);
      if (!bytes) {
        const path = join(dir, `speech.${container}`);
        await ffmpeg('-i', speechWav, ...containers[container], path);
        bytes = await readFile(path);
        made.set(container, bytes);
      }
      return bytes;
    },
    long: await readFile(longWav),
    longSeconds: await duration(longWav),
    silence: await readFile(silenceWav),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The 44-byte header of a 16 kHz mono 16-bit PCM WAV declaring `seconds` of audio. */
export function wavHeader(seconds: number): Buffer {
  const dataBytes = Math.round(seconds * 16_000) * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** `seconds` of a 440 Hz tone as a complete 16 kHz mono 16-bit WAV file. */
export function toneWav(seconds: number): Buffer {
  const samples = Buffer.alloc(Math.round(seconds * 16_000) * 2);
  for (let i = 0; i < samples.length / 2; i++) {
    samples.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), i * 2);
  }
  return Buffer.concat([wavHeader(seconds), samples]);
}

/**
 * The fixtures' speech looped to `seconds` and encoded with `args` (e.g. 20 minutes of 8 kb/s
 * Opus in Ogg, a few MB that decode to hundreds of MB of samples). Speech, not silence, so the
 * worker's silence check does not skip it.
 */
export async function loopedSpeech(seconds: number, file: string, args: readonly string[]): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-audio-'));
  try {
    const speechWav = join(dir, 'speech-source.wav');
    await run('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', speechWav, SPEECH]);
    const out = join(dir, file);
    await ffmpeg('-stream_loop', '-1', '-i', speechWav, '-t', String(seconds), '-ac', '1', ...args, out);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
