// The MP4 contract (API.md §5): H.264 (libx264), yuv420p, +faststart, exactly `frames` frames at
// `fps`, the clip's audio as AAC. Flags that stamp versions or times are off, and the thread
// count is fixed, so the same frames always give the same bytes.
import type { ClipSpec, FrameSink, VideoOutput } from '../backends/backend.js';
import { runToBuffer, startProcess, type FfmpegPaths } from './run-ffmpeg.js';

export interface EncoderOptions {
  readonly paths: FfmpegPaths;
  readonly threads: number;
  readonly signal: AbortSignal;
}

function outputArgs(spec: ClipSpec, threads: number, hasAudio: boolean, target: string): string[] {
  return [
    ...(hasAudio ? ['-map', '0:v:0', '-map', '1:a:0?'] : ['-map', '0:v:0']),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-pix_fmt',
    'yuv420p',
    '-threads',
    String(threads),
    '-r',
    String(spec.fps),
    '-frames:v',
    String(spec.frames),
    ...(hasAudio
      ? ['-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-t', String(spec.frames / spec.fps)]
      : ['-an']),
    '-movflags',
    '+faststart',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-flags:v',
    '+bitexact',
    '-flags:a',
    '+bitexact',
    '-y',
    target,
  ];
}

const quiet = ['-nostdin', '-hide_banner', '-loglevel', 'error'];

/** A VideoOutput that writes the MP4 to `target`; `finished` settles when ffmpeg is done. */
export class Mp4Encoder implements VideoOutput {
  private done: Promise<void> | undefined;
  spec: ClipSpec | undefined;

  constructor(
    private readonly target: string,
    private readonly options: EncoderOptions,
  ) {}

  frames(spec: ClipSpec): Promise<FrameSink> {
    this.claim(spec);
    const { width, height, fps } = spec;
    const audio = spec.audio === undefined ? [] : ['-i', spec.audio];
    const running = startProcess(
      this.options.paths.ffmpeg,
      [
        ...quiet,
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        '-s',
        `${width}x${height}`,
        '-framerate',
        String(fps),
        '-i',
        'pipe:0',
        ...audio,
        ...outputArgs(spec, this.options.threads, spec.audio !== undefined, this.target),
      ],
      this.options.signal,
    );
    const frameBytes = width * height * 3;
    let written = 0;
    const stdin = running.child.stdin;
    this.done = (async () => {
      await running.done;
      if (written !== spec.frames) throw new Error(`the back-end wrote ${written} of ${spec.frames} frames`);
    })();
    this.done.catch(() => undefined);
    return Promise.resolve({
      write: async (rgb: Uint8Array) => {
        if (rgb.length !== frameBytes)
          throw new Error(`a frame has ${rgb.length} bytes, expected ${frameBytes}`);
        if (written >= spec.frames) throw new Error(`more than ${spec.frames} frames written`);
        written++;
        if (!stdin.write(rgb)) {
          await new Promise<void>((resolve, reject) => {
            stdin.once('drain', resolve);
            running.done.then(() => resolve(), reject);
          });
        }
        if (written === spec.frames) stdin.end();
      },
    });
  }

  transcode(path: string, spec: ClipSpec): Promise<void> {
    this.claim(spec);
    const seconds = spec.frames / spec.fps;
    const audio = spec.audio === undefined ? [] : ['-i', spec.audio];
    // fps resamples; scale fits the contract's even size; tpad holds the last frame when the
    // source is shorter than the clip, so the count is exact either way.
    const filter = `fps=${spec.fps},scale=${spec.width}:${spec.height}:flags=bicubic,setsar=1,tpad=stop_mode=clone:stop_duration=${seconds}`;
    const args = [...quiet, '-i', path, ...audio, '-vf', filter];
    const mapped = outputArgs(spec, this.options.threads, true, this.target);
    if (spec.audio === undefined) mapped.splice(0, 4, '-map', '0:v:0', '-map', '0:a:0?');
    const running = startProcess(this.options.paths.ffmpeg, [...args, ...mapped], this.options.signal);
    running.child.stdin.end();
    this.done = running.done;
    return running.done;
  }

  /** Settles once the MP4 is complete (or the encoding failed). */
  async finished(): Promise<ClipSpec> {
    if (!this.done || !this.spec) throw new Error('the back-end produced no video');
    await this.done;
    return this.spec;
  }

  private claim(spec: ClipSpec): void {
    if (this.spec) throw new Error('a back-end opened the output twice');
    if (spec.width % 2 !== 0 || spec.height % 2 !== 0) {
      throw new Error(`yuv420p needs even sizes, got ${spec.width}×${spec.height}`);
    }
    if (!Number.isInteger(spec.frames) || spec.frames < 1) throw new Error(`bad frame count ${spec.frames}`);
    this.spec = spec;
  }
}

/** The first frame as a JPEG poster. */
export async function writePoster(
  paths: FfmpegPaths,
  video: string,
  target: string,
  signal: AbortSignal,
): Promise<void> {
  await runToBuffer(
    paths.ffmpeg,
    [
      ...quiet,
      '-i',
      video,
      '-frames:v',
      '1',
      '-q:v',
      '3',
      '-map_metadata',
      '-1',
      '-fflags',
      '+bitexact',
      '-y',
      target,
    ],
    signal,
  );
}
