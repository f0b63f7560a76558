// Test support for the video-diffusion back-end: a render request for a still, and a VideoOutput
// whose sink counts, sizes and hashes the frames it is given.
import { createHash } from 'node:crypto';
import { createLogger, type Logger } from '@switchboard/telemetry';
import type { ClipSpec, JobParams, RenderRequest, VideoOutput } from '../backend.js';

export const silentLogger: Logger = createLogger({ service: 'video-diffusion-test', level: 'silent' });

export interface Recorded {
  spec: ClipSpec | undefined;
  frames: number;
  /** Frames whose byte length was not width × height × 3. */
  misfits: number;
  /** sha256 over every frame, in order. */
  hash: string;
  progress: number[];
}

export function recordingOutput(): { out: VideoOutput; recorded: Recorded } {
  const recorded: Recorded = { spec: undefined, frames: 0, misfits: 0, hash: '', progress: [] };
  const hash = createHash('sha256');
  const out: VideoOutput = {
    async frames(spec) {
      recorded.spec = spec;
      return {
        async write(rgb) {
          recorded.frames += 1;
          if (rgb.length !== spec.width * spec.height * 3) recorded.misfits += 1;
          hash.update(rgb);
          recorded.hash = hash.copy().digest('hex');
        },
      };
    },
    transcode: () => Promise.reject(new Error('video-diffusion never transcodes')),
  };
  return { out, recorded };
}

export function renderRequest(
  image: string,
  params: Partial<JobParams>,
  recorded: Recorded,
  signal: AbortSignal = new AbortController().signal,
): RenderRequest {
  return {
    jobId: 'job-test',
    params: { motion_bucket_id: 127, noise_aug_strength: 0.02, ...params },
    inputs: { image },
    workDir: '/nonexistent',
    signal,
    progress: (fraction) => recorded.progress.push(fraction),
    logger: silentLogger,
  };
}
