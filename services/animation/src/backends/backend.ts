// What every animation back-end is to the job runner: given a job's parameters and its inputs as
// local files, it renders a clip into a VideoOutput (raw frames, or a finished video file to
// re-encode) and reports progress. The runner owns everything around it: pulling the job,
// heartbeats, cancellation, encoding the MP4, storing it and the job's state.
import type { Logger } from '@switchboard/telemetry';

// The back-end names are the job system's (queue subjects, consumers, records).
export { backendNames, type BackendName } from '@switchboard/jobs';
import type { BackendName } from '@switchboard/jobs';

/** The job's validated parameters (`POST /animate`); fields that do not apply to a back-end are absent. */
export interface JobParams {
  /** Frames per second asked for; absent = the back-end's default (24, or the driver's rate). */
  readonly fps?: number | undefined;
  /** Seconds asked for; absent = the back-end's default (4 s, or the driver's length). */
  readonly duration_s?: number | undefined;
  readonly seed?: number | undefined;
  /** video-diffusion only: multiples of 64; absent = the model's native size. */
  readonly width?: number | undefined;
  readonly height?: number | undefined;
  /** video-diffusion: 1–255, default 127. */
  readonly motion_bucket_id: number;
  /** video-diffusion: 0–1, default 0.02. */
  readonly noise_aug_strength: number;
  /** avatar: what the avatar says (≤ 5000 characters) when there is no audio. */
  readonly text?: string | undefined;
  /** avatar: the vendor's voice id for `text`. */
  readonly voice?: string | undefined;
}

/** The job's media, downloaded from the object store into the attempt's work folder. */
export interface JobInputs {
  /** Always present: a PNG, JPEG or WebP (checked by content at submission). */
  readonly image: string;
  readonly drivingVideo?: string | undefined;
  readonly audio?: string | undefined;
}

export interface RenderRequest {
  readonly jobId: string;
  readonly params: JobParams;
  readonly inputs: JobInputs;
  /** A private folder for this attempt; the runner removes it afterwards. */
  readonly workDir: string;
  /**
   * Aborted when the job is canceled or the worker stops. Check it between denoising steps,
   * frames and vendor polls (`signal.throwIfAborted()`), and pass it to anything that waits.
   */
  readonly signal: AbortSignal;
  /** Fraction done, 0..1, at least once per step or frame batch (the runner throttles writes). */
  progress(fraction: number): void;
  readonly logger: Logger;
}

/** The geometry and timing of the clip, fixed before the first frame. */
export interface ClipSpec {
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  /** Exactly this many frames end up in the MP4. */
  readonly frames: number;
  /** An audio track to mux in (cut to the clip's length); absent = silent video. */
  readonly audio?: string | undefined;
}

/** Where raw frames go: RGB24, row-major, `width * height * 3` bytes each, in order. */
export interface FrameSink {
  /** Resolves when the encoder has taken the frame (back-pressure). */
  write(rgb: Uint8Array): Promise<void>;
}

export interface VideoOutput {
  /** Opens the encoder for `spec`; the back-end then writes exactly `spec.frames` frames. */
  frames(spec: ClipSpec): Promise<FrameSink>;
  /**
   * A finished video file (a vendor's result) re-encoded to the contract: resampled to
   * `spec.fps`, scaled to `spec.width`×`spec.height`, cut or padded (last frame held) to exactly
   * `spec.frames`, with the file's own audio unless `spec.audio` names another track.
   */
  transcode(path: string, spec: ClipSpec): Promise<void>;
}

/** One model (or vendor) the back-end runs, as `/models` lists it. */
export interface BackendModel {
  readonly id: string;
  readonly status: 'loading' | 'ready' | 'failed';
  readonly isDefault: boolean;
  /** Operator-facing note: development models say they are noise; avatar says it is unconfigured. */
  readonly description: string;
  /** A random-weight model built by @switchboard/models-dev. */
  readonly development?: boolean;
  /** What the model registry knows once it is loaded (the weights' dtype). */
  readonly details?: { readonly dtype?: string };
}

export interface BackendInfo {
  readonly name: BackendName;
  /** False when the back-end cannot run at all here (avatar without AVATAR_BASE_URL/AVATAR_API_KEY). */
  readonly configured: boolean;
  readonly models: readonly BackendModel[];
  /** video-diffusion: the default model's native frame size. */
  readonly nativeWidth?: number | undefined;
  readonly nativeHeight?: number | undefined;
}

/**
 * A failure that no retry can mend (bad input, a vendor that rejects the request or the
 * credentials): the job fails at once with this code instead of being attempted again.
 * `code` is a stable code of the error table (`invalid_request`, `invalid_audio`,
 * `upstream_failed`, `upstream_timeout`, `unavailable`).
 */
export class PermanentJobError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PermanentJobError';
  }
}

export interface Backend {
  readonly name: BackendName;
  describe(): BackendInfo;
  /** Resolves once the back-end's models are loaded (or at once for a vendor). */
  ready(): Promise<void>;
  render(request: RenderRequest, out: VideoOutput): Promise<void>;
  dispose(): Promise<void>;
}
