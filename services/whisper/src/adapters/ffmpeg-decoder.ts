// Decodes any container and codec ffmpeg knows into 16 kHz mono float PCM, fed from the upload as
// it arrives. ffmpeg's own words stay in the log: a response only ever says `invalid_audio`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { SAMPLE_RATE } from '../audio/pcm.js';
import { uploadSource } from '../audio/upload-source.js';

const BYTES_PER_SAMPLE = 4;
/** ffmpeg's stderr kept for the log; its head says what was wrong. */
const STDERR_LIMIT = 4096;

export interface DecodeOptions {
  readonly ffmpegPath: string;
  readonly maxSeconds: number;
  /** Where uploads that must be read with seeking are spooled (removed afterwards). */
  readonly spoolDir: string;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

/**
 * Feeds the upload to ffmpeg (piped as it arrives, or from a spooled file for containers that
 * need seeking) and returns the decoded samples. Throws invalid_audio when ffmpeg cannot decode
 * it, payload_too_large past `maxSeconds`, and the abort reason when the caller goes away — in
 * every case the ffmpeg process and any spooled file are gone before this settles.
 */
export async function decodeToPcm(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: DecodeOptions,
): Promise<Float32Array> {
  options.signal.throwIfAborted();
  const source = await uploadSource(input, options.spoolDir, options.signal);
  if (source.kind === 'pipe') return runFfmpeg('pipe:0', source.data, options);
  try {
    return await runFfmpeg(source.path, undefined, options);
  } finally {
    await source.remove();
  }
}

async function runFfmpeg(
  inputArg: string,
  stdinData: AsyncIterable<Uint8Array> | undefined,
  options: DecodeOptions,
): Promise<Float32Array> {
  const { signal, logger } = options;
  const ffmpeg = spawn(
    options.ffmpegPath,
    // -vn: an audio track inside a video is fine, the picture is never decoded.
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      inputArg,
      '-vn',
      '-ac',
      '1',
      '-ar',
      String(SAMPLE_RATE),
      '-f',
      'f32le',
      'pipe:1',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // Settles either way: a binary that could not start emits 'error' instead of closing.
  const exited = (once(ffmpeg, 'close') as Promise<[number | null, NodeJS.Signals | null]>).catch(
    (): [null, null] => [null, null],
  );
  const spawned = once(ffmpeg, 'spawn');

  let stderr = '';
  ffmpeg.stderr.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < STDERR_LIMIT) stderr += text;
  });

  const maxBytes = options.maxSeconds * SAMPLE_RATE * BYTES_PER_SAMPLE;
  const chunks: Buffer[] = [];
  let bytes = 0;
  let tooLong = false;
  ffmpeg.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      tooLong = true;
      ffmpeg.kill('SIGKILL');
      return;
    }
    chunks.push(chunk);
  });

  const kill = () => ffmpeg.kill('SIGKILL');
  signal.addEventListener('abort', kill, { once: true });
  try {
    await spawned;
    if (stdinData) await feed(ffmpeg.stdin, stdinData, () => tooLong || signal.aborted);
    else ffmpeg.stdin.end();
    const [code, killedBy] = await exited;
    signal.throwIfAborted();
    if (tooLong) {
      throw new SwitchboardError('payload_too_large', {
        message: `The audio is longer than ${options.maxSeconds} seconds.`,
        param: 'file',
      });
    }
    // ffmpeg can exit 0 having found nothing it could read (it only logs "Invalid data").
    if (code !== 0 || (bytes === 0 && stderr.trim() !== '')) {
      logger.info({ code, signal: killedBy, ffmpeg: stderr.trim() }, 'ffmpeg could not decode the upload');
      throw new SwitchboardError('invalid_audio', {
        message: 'The file is not audio the decoder can read.',
        param: 'file',
      });
    }
  } catch (error) {
    kill();
    await exited;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`ffmpeg not found at "${options.ffmpegPath}" (FFMPEG_PATH)`);
    }
    throw error;
  } finally {
    signal.removeEventListener('abort', kill);
  }
  return toSamples(chunks, bytes);
}

/**
 * Writes the upload into ffmpeg's stdin with backpressure. ffmpeg may stop reading early (it has
 * seen enough, or the input is garbage): the rest of the upload is then drained and dropped, so
 * the caller's stream still ends cleanly and the exit code tells what happened.
 */
async function feed(
  stdin: NodeJS.WritableStream & { destroyed: boolean },
  input: AsyncIterable<Uint8Array>,
  stop: () => boolean,
): Promise<void> {
  let broken = false;
  stdin.on('error', () => {
    broken = true; // EPIPE: ffmpeg closed its input
  });
  for await (const chunk of input) {
    if (stop()) break;
    if (broken || stdin.destroyed) continue;
    if (!stdin.write(chunk)) {
      await Promise.race([once(stdin, 'drain'), once(stdin, 'close')]);
    }
  }
  if (!broken && !stdin.destroyed) stdin.end();
}

/** Joins ffmpeg's output into one Float32Array (little-endian f32, as asked for with -f f32le). */
function toSamples(chunks: readonly Buffer[], bytes: number): Float32Array {
  const whole = bytes - (bytes % BYTES_PER_SAMPLE);
  const samples = new Float32Array(whole / BYTES_PER_SAMPLE);
  const view = new Uint8Array(samples.buffer);
  let offset = 0;
  for (const chunk of chunks) {
    const take = Math.min(chunk.length, whole - offset);
    view.set(chunk.subarray(0, take), offset);
    offset += take;
  }
  return samples;
}
