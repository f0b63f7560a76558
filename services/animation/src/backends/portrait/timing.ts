// The clip's rate and length from the request and its driver: fps is the request's,
// else the driver's own rate (a driving video's), else 25; the length is the driver's, cut at
// duration_s when that is given; frames = round(fps × length), at least one.

/** The rate of an audio-driven clip when the request names none (LivePortrait's output_fps). */
export const DEFAULT_FPS = 25;

export interface ClipTiming {
  readonly fps: number;
  readonly frames: number;
  /** The clip's length in seconds (the driver's, or duration_s when shorter). */
  readonly seconds: number;
}

export function clipTiming(options: {
  /** params.fps */
  readonly fps?: number | undefined;
  /** params.duration_s */
  readonly durationS?: number | undefined;
  /** The driver's own frame rate, when it has one. */
  readonly driverFps?: number | undefined;
  readonly driverSeconds: number;
}): ClipTiming {
  const fps = options.fps ?? options.driverFps ?? DEFAULT_FPS;
  const seconds =
    options.durationS === undefined
      ? options.driverSeconds
      : Math.min(options.driverSeconds, options.durationS);
  return { fps, seconds, frames: Math.max(1, Math.round(fps * seconds)) };
}
