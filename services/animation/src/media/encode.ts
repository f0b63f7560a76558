// The MP4 the API promises: H.264 (libx264), yuv420p, +faststart, exactly `frames` frames at
// `fps`, the clip's audio as AAC. Flags that stamp versions or times are off, and the thread
// count is fixed, so the same frames always give the same bytes.
import type { ClipSpec, FrameSink, VideoOutput } from '../backends/backend.js';
import { mediaInput, stdinInput } from './input.js';
import { startProcess, type FfmpegPaths } from './run-ffmpeg.js';

export interface EncoderOptions {
  readonly paths: FfmpegPaths;
  readonly threads: number;
  readonly signal: AbortSignal;
  /** Where the poster (the clip's first frame, JPEG) goes: written by the same ffmpeg run. */
  readonly poster: string;
}

/** A second output of the same run: the first frame as a JPEG at the clip's size. */
function posterArgs(spec: ClipSpec, target: string): string[] {
  return [
    '-map',
    '0:v:0',
    '-vf',
    `scale=${spec.width}:${spec.height}:flags=bicubic`,
    '-frames:v',
    '1',
    '-q:v',
    '3',
    '-an',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-y',
    target,
  ];
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
  /**
   * Whether the back-end handed over a finished video: its frame count then depends on the
   * source's timing and is checked on the result; raw frames are counted as they are written.
   */
  transcoded = false;

  constructor(
    private readonly target: string,
    private readonly options: EncoderOptions,
  ) {}

  async frames(spec: ClipSpec): Promise<FrameSink> {
    this.claim(spec);
    const { width, height, fps } = spec;
    const audio = await this.audioInput(spec);
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
        ...stdinInput,
        ...audio,
        ...outputArgs(spec, this.options.threads, spec.audio !== undefined, this.target),
        ...posterArgs(spec, this.options.poster),
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
    return {
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
    };
  }

  async transcode(path: string, spec: ClipSpec): Promise<void> {
    this.claim(spec);
    this.transcoded = true;
    const seconds = spec.frames / spec.fps;
    const video = await mediaInput(path, ['video']);
    const audio = await this.audioInput(spec);
    // fps resamples; scale fits the contract's even size; tpad holds the last frame when the
    // source is shorter than the clip, so the count is exact either way.
    const filter = `fps=${spec.fps},scale=${spec.width}:${spec.height}:flags=bicubic,setsar=1,tpad=stop_mode=clone:stop_duration=${seconds}`;
    const args = [...quiet, ...video, ...audio, '-vf', filter];
    const mapped = outputArgs(spec, this.options.threads, true, this.target);
    if (spec.audio === undefined) mapped.splice(0, 4, '-map', '0:v:0', '-map', '0:a:0?');
    const running = startProcess(
      this.options.paths.ffmpeg,
      [...args, ...mapped, ...posterArgs(spec, this.options.poster)],
      this.options.signal,
    );
    running.child.stdin.end();
    this.done = running.done;
    return running.done;
  }

  /** The driver's sound is the tenant's audio or driving video: read like any upload. */
  private async audioInput(spec: ClipSpec): Promise<string[]> {
    return spec.audio === undefined ? [] : mediaInput(spec.audio, ['audio', 'video']);
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
