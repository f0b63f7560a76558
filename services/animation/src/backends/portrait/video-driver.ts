// A driving video: probed for its rate, length and sound; decoded by ffmpeg one frame at a time at
// the clip's rate, centre-cropped to the extractors' square (no face detector: the driving face is
// expected in the middle, as in LivePortrait's pre-cropped driving videos); each frame's motion
// relative to the first one. When ffmpeg's resampling yields a frame fewer than the clip needs,
// the last motion is held.
import type { JobParams } from '../backend.js';
import { PermanentJobError } from '../backend.js';
import { decodeVideoFrames } from '../../media/decode.js';
import { probeMedia, type MediaInfo } from '../../media/probe.js';
import { FfmpegError, type FfmpegPaths } from '../../media/run-ffmpeg.js';
import type { Driver } from './driver.js';
import type { KeypointInfo } from './keypoints.js';
import { relativeMotion, type Motion } from './motion.js';
import { clipTiming } from './timing.js';

const unreadable = (cause: unknown) =>
  new PermanentJobError('invalid_request', 'The driving video could not be decoded.', { cause });

/** The driving video's length in seconds: its frames at its rate, else the container's duration. */
async function videoSeconds(ffmpeg: FfmpegPaths, path: string, info: MediaInfo, signal: AbortSignal) {
  const { fps, frames } = info.video ?? {};
  if (fps !== undefined && frames !== undefined && frames > 0) return frames / fps;
  if (info.duration !== undefined && info.duration > 0) return info.duration;
  const counted = await probeMedia(ffmpeg, path, { kind: 'video', countFrames: true, signal });
  const n = counted.video?.frames;
  return n !== undefined && fps !== undefined ? n / fps : undefined;
}

export interface VideoDriverOptions {
  readonly ffmpeg: FfmpegPaths;
  readonly path: string;
  readonly params: JobParams;
  readonly cropSize: number;
  /** The motion extractor, for one RGB24 crop. */
  readonly keypointInfo: (rgb: Uint8Array) => Promise<KeypointInfo>;
}

export async function openVideoDriver(options: VideoDriverOptions, signal: AbortSignal): Promise<Driver> {
  const { ffmpeg, path, params, cropSize } = options;
  const info = await probeMedia(ffmpeg, path, { kind: 'video', signal }).catch((error: unknown) => {
    throw error instanceof FfmpegError || error instanceof SyntaxError ? unreadable(error) : error;
  });
  if (info.video === undefined) {
    throw new PermanentJobError('invalid_request', 'The driving video has no video stream.');
  }
  const seconds = await videoSeconds(ffmpeg, path, info, signal);
  if (seconds === undefined) throw unreadable(new Error('no duration'));
  const timing = clipTiming({
    fps: params.fps,
    durationS: params.duration_s,
    driverFps: info.video.fps,
    driverSeconds: seconds,
  });

  async function* motions(abort: AbortSignal): AsyncGenerator<Motion, void, undefined> {
    const frames = decodeVideoFrames(
      ffmpeg,
      path,
      { width: cropSize, height: cropSize, fit: 'cover', fps: timing.fps, maxFrames: timing.frames },
      abort,
    );
    let first: KeypointInfo | undefined;
    let last: Motion | undefined;
    let made = 0;
    try {
      for await (const rgb of frames) {
        const current = await options.keypointInfo(rgb);
        first ??= current;
        last = relativeMotion(first, current);
        yield last;
        if (++made === timing.frames) return;
      }
    } catch (error) {
      throw error instanceof FfmpegError ? unreadable(error) : error;
    }
    if (last === undefined) throw unreadable(new Error('no frames'));
    for (; made < timing.frames; made++) yield last;
  }

  return { timing, audio: info.audio === undefined ? undefined : path, motions };
}
