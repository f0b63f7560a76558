// The clip an avatar job produces, from the vendor's video: the vendor's frame size
// (made even, as yuv420p H.264 needs), the asked fps or else the vendor's rate or else 25, and
// the driver's length (the vendor video's) cut at `duration_s` when one was asked for.
import type { ClipSpec, JobParams } from '../backend.js';

export const FALLBACK_FPS = 25;

export interface VendorVideo {
  readonly width: number;
  readonly height: number;
  /** The stream's frame rate, when the file says. */
  readonly fps: number | undefined;
  /** Seconds: the container's, else the talk's `duration`, else frames / fps. */
  readonly duration: number | undefined;
}

const even = (n: number) => Math.max(2, Math.floor(n / 2) * 2);

/** A vendor rate the contract can carry (1–60 fps), else undefined. */
const usableRate = (fps: number | undefined) =>
  fps !== undefined && Number.isFinite(fps) && fps >= 1 && fps <= 60 ? fps : undefined;

/** Undefined when the vendor's video has no size or no length: nothing sensible can be made. */
export function clipSpec(
  video: VendorVideo,
  params: Pick<JobParams, 'fps' | 'duration_s'>,
  audio: string | undefined,
): ClipSpec | undefined {
  const { width, height, duration } = video;
  if (!(width > 0 && height > 0) || duration === undefined || !(duration > 0)) return undefined;
  const fps = params.fps ?? usableRate(video.fps) ?? FALLBACK_FPS;
  const length = params.duration_s === undefined ? duration : Math.min(duration, params.duration_s);
  return {
    width: even(width),
    height: even(height),
    fps,
    frames: Math.max(1, Math.round(fps * length)),
    ...(audio === undefined ? {} : { audio }),
  };
}
