// Media into numbers for the models, all through ffmpeg (PNG/JPEG/WebP stills, any video, any
// audio): RGB24 frames at a fixed size, and mono float PCM.
import { mediaInput } from './input.js';
import { startProcess, runToBuffer, type FfmpegPaths } from './run-ffmpeg.js';

/**
 * How a picture is brought to the model's size: `stretch` resizes to exactly width×height (what
 * diffusers' image processor does), `cover` scales to cover and crops the centre (a face crop
 * without a detector).
 */
export type Fit = 'stretch' | 'cover';

export interface FrameSize {
  readonly width: number;
  readonly height: number;
  readonly fit: Fit;
}

function scaleFilter({ width, height, fit }: FrameSize): string {
  if (fit === 'stretch') return `scale=${width}:${height}:flags=bicubic`;
  return (
    `scale=${width}:${height}:force_original_aspect_ratio=increase:flags=bicubic,` + `crop=${width}:${height}`
  );
}

/** The still at `path` as RGB24 bytes of `size` (the first frame of an animated file). */
export async function decodeImage(
  paths: FfmpegPaths,
  path: string,
  size: FrameSize,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const out = await runToBuffer(
    paths.ffmpeg,
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      ...(await mediaInput(path, ['image'])),
      '-frames:v',
      '1',
      '-vf',
      scaleFilter(size),
      '-pix_fmt',
      'rgb24',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    signal,
  );
  const expected = size.width * size.height * 3;
  if (out.length !== expected) throw new Error(`decoded image has ${out.length} bytes, expected ${expected}`);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

export interface VideoDecodeOptions extends FrameSize {
  /** Resample to this rate first (frames dropped or repeated); absent = the file's own frames. */
  readonly fps?: number | undefined;
  /** Stop after this many frames. */
  readonly maxFrames?: number | undefined;
}

/**
 * The frames of the video at `path`, one RGB24 array each, as ffmpeg decodes them: at most one
 * frame is held here, and ffmpeg waits while the consumer works. Stopping early ends ffmpeg.
 */
export async function* decodeVideoFrames(
  paths: FfmpegPaths,
  path: string,
  options: VideoDecodeOptions,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array, void, undefined> {
  const filters = [options.fps === undefined ? '' : `fps=${options.fps}`, scaleFilter(options)];
  const input = await mediaInput(path, ['video']);
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...input, '-an'];
  args.push('-vf', filters.filter(Boolean).join(','));
  if (options.maxFrames !== undefined) args.push('-frames:v', String(options.maxFrames));
  args.push('-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1');
  const running = startProcess(paths.ffmpeg, args, signal);
  running.child.stdin.end();
  const frameBytes = options.width * options.height * 3;
  let pending: Buffer = Buffer.alloc(0);
  let finished = false;
  try {
    for await (const chunk of running.child.stdout as AsyncIterable<Buffer>) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= frameBytes) {
        yield new Uint8Array(pending.subarray(0, frameBytes));
        pending = pending.subarray(frameBytes);
      }
    }
    await running.done;
    finished = true;
  } finally {
    if (!finished) running.child.kill('SIGKILL');
  }
}

/** The audio at `path` as mono float PCM at `sampleRate`, at most `maxSeconds` long. */
export async function decodeAudio(
  paths: FfmpegPaths,
  path: string,
  options: { sampleRate: number; maxSeconds?: number | undefined },
  signal?: AbortSignal,
): Promise<Float32Array> {
  const input = await mediaInput(path, ['audio']);
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...input, '-vn'];
  if (options.maxSeconds !== undefined) args.push('-t', String(options.maxSeconds));
  args.push('-ac', '1', '-ar', String(options.sampleRate), '-f', 'f32le', 'pipe:1');
  const out = await runToBuffer(paths.ffmpeg, args, signal);
  const samples = new Float32Array(out.length / 4);
  Buffer.from(samples.buffer).set(out.subarray(0, samples.length * 4));
  return samples;
}
