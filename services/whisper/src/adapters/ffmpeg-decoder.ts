// Decodes the upload (an audio container its bytes prove: WAV, MP3, FLAC, Ogg, MP4/M4A/MOV,
// WebM/Matroska; anything else is refused unread) into 16 kHz mono float PCM, fed from the upload as
// it arrives (decodePcm) or from the spooled file of an upload received whole (receiveUpload, then
// decodeReceived), and hands the samples on as ffmpeg produces them: nothing is collected here, and
// while the consumer is busy ffmpeg's output is not read, so ffmpeg blocks on its full pipe and
// stops reading its input. ffmpeg's own words stay in the log: a response only says `invalid_audio`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { childProcessEnv } from '@switchboard/config';
import { SwitchboardError } from '@switchboard/errors';
import { demuxerFor, sniffBytesNeeded, SNIFF_HEAD_BYTES } from '@switchboard/models';
import type { Logger } from '@switchboard/telemetry';
import { SAMPLE_RATE } from '../audio/pcm.js';
import { peek, spoolUpload, uploadSource, type Spool, type SpooledUpload } from '../audio/upload-source.js';

const BYTES_PER_SAMPLE = 4;
/** ffmpeg's stderr kept for the log; its head says what was wrong. */
const STDERR_LIMIT = 4096;

export interface DecodeOptions {
  readonly ffmpegPath: string;
  readonly maxSeconds: number;
  /** Where uploads that must be read with seeking are spooled (removed afterwards), within a budget. */
  readonly spool: Spool;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

/**
 * Feeds the upload to ffmpeg (piped as it arrives, or from a spooled file for containers that
 * need seeking) and yields the decoded samples in ffmpeg's chunks, each a fresh array. Throws
 * invalid_audio when the bytes are no accepted audio container (ffmpeg then never runs) or ffmpeg
 * cannot decode them, payload_too_large past `maxSeconds`, no_capacity
 * when the spool is full, and the abort reason when the caller goes away — in every case, and when
 * the consumer stops early, the ffmpeg process and any spooled file are gone before this settles.
 */
export async function* decodePcm(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: DecodeOptions,
): AsyncGenerator<Float32Array, void, undefined> {
  options.signal.throwIfAborted();
  const { demuxer, data } = await sniffUpload(input, options);
  const source = await uploadSource(data, options.spool, options.signal);
  if (source.kind === 'pipe') {
    yield* runFfmpeg([...inputArgs(demuxer, 'pipe'), '-i', 'pipe:0'], source.data, options);
    return;
  }
  try {
    yield* decodeReceived({ demuxer, ...source }, options);
  } finally {
    await source.remove();
  }
}

/** An upload received whole into the spool, with the demuxer its first bytes proved it needs. */
export interface ReceivedUpload extends SpooledUpload {
  readonly demuxer: string;
}

/**
 * Reads the whole upload into a file under `spool.dir` (within the spool's budget and `owner`'s)
 * and resolves once its last byte is written, without running ffmpeg: bytes that are no accepted
 * audio container are read to the end and refused with invalid_audio. The caller decodes it with
 * `decodeReceived` and removes it.
 */
export async function receiveUpload(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: Pick<DecodeOptions, 'spool' | 'logger' | 'signal'> & { readonly owner: string },
): Promise<ReceivedUpload> {
  options.signal.throwIfAborted();
  const { demuxer, data } = await sniffUpload(input, options);
  return { demuxer, ...(await spoolUpload(data, options.spool, options.signal, options.owner)) };
}

/** The samples of a received upload, as decodePcm yields them; the file stays for the caller. */
export async function* decodeReceived(
  upload: Pick<ReceivedUpload, 'demuxer' | 'path'>,
  options: Omit<DecodeOptions, 'spool'>,
): AsyncGenerator<Float32Array, void, undefined> {
  yield* runFfmpeg([...inputArgs(upload.demuxer, 'file'), '-i', `file:${upload.path}`], undefined, options);
}

/**
 * A forced demuxer that opens nothing further, and only the protocol this input needs: ffmpeg
 * left to guess follows playlists and lists hidden in an upload to other files on the worker.
 */
const inputArgs = (demuxer: string, protocol: 'pipe' | 'file') => [
  '-f',
  demuxer,
  '-protocol_whitelist',
  protocol,
];

const notAudio = () =>
  new SwitchboardError('invalid_audio', {
    message: 'The file is not audio the decoder can read.',
    param: 'file',
  });

/** The demuxer the upload's first bytes prove it needs, and the upload replayed whole. */
async function sniffUpload(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  { logger, signal }: Pick<DecodeOptions, 'logger' | 'signal'>,
): Promise<{ demuxer: string; data: AsyncIterable<Uint8Array> }> {
  let { head, data } = await peek(input, SNIFF_HEAD_BYTES);
  const needed = sniffBytesNeeded(head);
  if (needed > head.length) ({ head, data } = await peek(data, needed));
  const demuxer = demuxerFor(head, 'audio');
  if (demuxer === null) {
    logger.info(
      { head: Buffer.from(head.subarray(0, SNIFF_HEAD_BYTES)).toString('hex') },
      'upload is no accepted audio container',
    );
    // Read to the end and dropped, as when ffmpeg refuses a file: the caller's stream ends cleanly.
    for await (const chunk of data) if (chunk.length > 0) signal.throwIfAborted();
    throw notAudio();
  }
  return { demuxer, data };
}

async function* runFfmpeg(
  inputArgs: readonly string[],
  stdinData: AsyncIterable<Uint8Array> | undefined,
  options: Omit<DecodeOptions, 'spool'>,
): AsyncGenerator<Float32Array, void, undefined> {
  const { signal, logger } = options;
  const ffmpeg = spawn(
    options.ffmpegPath,
    // -vn: an audio track inside a video is fine, the picture is never decoded.
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      ...inputArgs,
      '-vn',
      '-ac',
      '1',
      '-ar',
      String(SAMPLE_RATE),
      '-f',
      'f32le',
      'pipe:1',
    ],
    // ffmpeg parses tenants' uploads: the allow-listed environment only, never the worker's secrets.
    { stdio: ['pipe', 'pipe', 'pipe'], env: childProcessEnv() },
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

  const kill = () => ffmpeg.kill('SIGKILL');
  signal.addEventListener('abort', kill, { once: true });
  let stopped = false;
  let feeding: Promise<void> = Promise.resolve();
  try {
    await spawned;
    if (stdinData) {
      feeding = feed(ffmpeg.stdin, stdinData, () => stopped || signal.aborted);
      // An upload that breaks off must not leave ffmpeg waiting for the rest of its input.
      feeding.catch(kill);
    } else {
      ffmpeg.stdin.end();
    }
    const maxBytes = options.maxSeconds * SAMPLE_RATE * BYTES_PER_SAMPLE;
    const reader = new F32Reader();
    let bytes = 0;
    // Each chunk is handed on before the next is read: the stream stops reading the pipe once its
    // small buffer is full, which is what pauses ffmpeg.
    for await (const chunk of ffmpeg.stdout as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        throw new SwitchboardError('payload_too_large', {
          message: `The audio is longer than ${options.maxSeconds} seconds.`,
          param: 'file',
        });
      }
      const samples = reader.read(chunk);
      if (samples.length > 0) yield samples;
    }
    signal.throwIfAborted();
    await feeding;
    const [code, killedBy] = await exited;
    signal.throwIfAborted();
    // ffmpeg can exit 0 having found nothing it could read (it only logs "Invalid data").
    if (code !== 0 || (bytes === 0 && stderr.trim() !== '')) {
      logger.info({ code, signal: killedBy, ffmpeg: stderr.trim() }, 'ffmpeg could not decode the upload');
      throw notAudio();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`ffmpeg not found at "${options.ffmpegPath}" (FFMPEG_PATH)`);
    }
    throw error;
  } finally {
    stopped = true;
    signal.removeEventListener('abort', kill);
    if (ffmpeg.exitCode === null && ffmpeg.signalCode === null) kill();
    await exited;
    await feeding.catch(() => undefined);
  }
}

/** Little-endian f32 samples (as asked for with -f f32le) out of byte chunks of any length. */
class F32Reader {
  private rest = Buffer.alloc(0);

  read(chunk: Buffer): Float32Array {
    const bytes = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % BYTES_PER_SAMPLE);
    this.rest = Buffer.from(bytes.subarray(whole));
    const samples = new Float32Array(whole / BYTES_PER_SAMPLE);
    new Uint8Array(samples.buffer).set(bytes.subarray(0, whole));
    return samples;
  }
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
