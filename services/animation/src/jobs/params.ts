import type { JobRecord } from '@switchboard/jobs';
import type { JobParams } from '../backends/backend.js';

/** The record's parameters as a back-end takes them. */
export function jobParams(record: JobRecord): JobParams {
  const p = record.params;
  return {
    fps: p.fps,
    duration_s: p.duration_s,
    seed: p.seed,
    width: p.width,
    height: p.height,
    motion_bucket_id: p.motion_bucket_id,
    noise_aug_strength: p.noise_aug_strength,
    text: p.text,
    voice: p.voice,
  };
}
