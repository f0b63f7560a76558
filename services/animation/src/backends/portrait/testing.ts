// Test support for the portrait back-end: media fixtures made by the real ffmpeg (a still, driving
// videos with and without sound, a tone, a file that is no media at all), a VideoOutput that
// records the clip spec and a hash per frame, and render requests.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@switchboard/telemetry';
import type { ClipSpec, JobInputs, JobParams, RenderRequest, VideoOutput } from '../backend.js';

const run = promisify(execFile);
const ffmpeg = (...args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

export interface Fixtures {
  /** 320×240 PNG. */
  readonly image: string;
  /** 10 fps, 1.2 s (12 frames), with a 440 Hz AAC track. */
  readonly video: string;
  /** 8 fps, 0.75 s (6 frames), no audio stream. */
  readonly silentVideo: string;
  /** 0.8 s of 330 Hz, 22.05 kHz stereo WAV (resampled to the model's rate by the worker). */
  readonly wav: string;
  /** Bytes that are no media. */
  readonly garbage: string;
}

export async function makeFixtures(dir: string): Promise<Fixtures> {
  const f: Fixtures = {
    image: join(dir, 'face.png'),
    video: join(dir, 'driving.mp4'),
    silentVideo: join(dir, 'silent.mp4'),
    wav: join(dir, 'speech.wav'),
    garbage: join(dir, 'garbage.bin'),
  };
  const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  await Promise.all([
    ffmpeg('-f', 'lavfi', '-i', 'testsrc2=size=320x240', '-frames:v', '1', f.image),
    ffmpeg(
      ...['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=1.2'],
      ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1.2'],
      ...h264,
      ...['-c:a', 'aac', '-shortest', f.video],
    ),
    ffmpeg('-f', 'lavfi', '-i', 'testsrc=size=128x96:rate=8:duration=0.75', ...h264, f.silentVideo),
    ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=330:duration=0.8:sample_rate=22050', '-ac', '2', f.wav),
    writeFile(f.garbage, Buffer.from('this is not a media file, only words in a file'.repeat(20))),
  ]);
  return f;
}

export interface Recording {
  readonly specs: ClipSpec[];
  /** sha256 of each frame, in order. */
  readonly frames: string[];
  readonly progress: number[];
  readonly out: VideoOutput;
}

/** A VideoOutput that checks each frame's size and records it; `onFrame` runs after each write. */
export function recorder(onFrame?: (count: number) => void): Recording {
  const specs: ClipSpec[] = [];
  const frames: string[] = [];
  return {
    specs,
    frames,
    progress: [],
    out: {
      async frames(spec) {
        specs.push(spec);
        return {
          async write(rgb) {
            assert.equal(rgb.length, spec.width * spec.height * 3, 'one RGB24 frame of the spec size');
            frames.push(createHash('sha256').update(rgb).digest('hex'));
            onFrame?.(frames.length);
          },
        };
      },
      async transcode() {
        throw new Error('the portrait back-end writes frames');
      },
    },
  };
}

const logger = createLogger({ service: 'test', level: 'silent' });

export function renderRequest(
  inputs: JobInputs,
  params: Partial<JobParams>,
  recording: Recording,
  signal: AbortSignal = new AbortController().signal,
): RenderRequest {
  return {
    jobId: 'job-test',
    params: { motion_bucket_id: 127, noise_aug_strength: 0.02, ...params },
    inputs,
    workDir: '/nonexistent',
    signal,
    progress: (fraction) => recording.progress.push(fraction),
    logger,
  };
}
