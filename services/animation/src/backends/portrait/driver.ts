// What drives a portrait clip, once its input is checked: the clip's timing, the audio track its
// MP4 carries, and exactly one motion per frame. Two kinds: a driving video (video-driver.ts) and
// speech (audio-driver.ts).
import type { Motion } from './motion.js';
import type { ClipTiming } from './timing.js';

export interface Driver {
  readonly timing: ClipTiming;
  /** The audio to mux into the MP4 (the driver's own sound), or undefined for a silent clip. */
  readonly audio: string | undefined;
  /** Exactly `timing.frames` motions, in order, made as they are asked for. */
  motions(signal: AbortSignal): AsyncGenerator<Motion, void, undefined>;
}
