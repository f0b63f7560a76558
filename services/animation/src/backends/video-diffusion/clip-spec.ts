// The clip a video-diffusion job asks for, checked before any model work: size
// (multiples of 64, default the model's native size), rate and length (defaults 24 fps, 4 s),
// frame count round(fps × duration), and the seed (a fresh random one when absent).
import { SeededRandom } from '@switchboard/models';
import { PermanentJobError, type ClipSpec, type JobParams } from '../backend.js';

export const DEFAULT_FPS = 24;
export const DEFAULT_DURATION_S = 4;
/** The API's size grid; also a multiple of every VAE scale factor in use (8). */
export const SIZE_MULTIPLE = 64;

export interface VideoJob {
  readonly spec: ClipSpec;
  readonly seed: bigint;
  readonly motionBucketId: number;
  readonly noiseAugStrength: number;
}

const invalid = (message: string): PermanentJobError => new PermanentJobError('invalid_request', message);

export function videoJob(params: JobParams, native: { width: number; height: number }): VideoJob {
  const width = params.width ?? native.width;
  const height = params.height ?? native.height;
  for (const [name, value] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isInteger(value) || value < SIZE_MULTIPLE || value % SIZE_MULTIPLE !== 0) {
      throw invalid(`${name} must be a positive multiple of ${SIZE_MULTIPLE}, got ${value}`);
    }
  }
  const fps = params.fps ?? DEFAULT_FPS;
  const duration = params.duration_s ?? DEFAULT_DURATION_S;
  if (!(fps > 0 && Number.isFinite(fps))) throw invalid(`fps must be positive, got ${fps}`);
  if (!(duration > 0 && Number.isFinite(duration)))
    throw invalid(`duration_s must be positive, got ${duration}`);
  if (params.seed !== undefined && !Number.isSafeInteger(params.seed)) {
    throw invalid(`seed must be an integer, got ${params.seed}`);
  }
  return {
    spec: { width, height, fps, frames: Math.max(1, Math.round(fps * duration)) },
    seed: params.seed === undefined ? SeededRandom.randomSeed() : BigInt(params.seed),
    motionBucketId: params.motion_bucket_id,
    noiseAugStrength: params.noise_aug_strength,
  };
}
