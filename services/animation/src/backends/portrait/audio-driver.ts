// Speech as the driver: the audio decoded by ffmpeg to mono PCM at the audio-to-motion model's
// rate (cut at duration_s), turned into motion frames in one run, and sampled at each output
// frame's time (linear between motion frames), so any output fps reads the same motion.
import type { JobParams } from '../backend.js';
import { PermanentJobError } from '../backend.js';
import { decodeAudio } from '../../media/decode.js';
import { FfmpegError, type FfmpegPaths } from '../../media/run-ffmpeg.js';
import type { AudioMotionModel } from './audio-model.js';
import type { Driver } from './driver.js';
import { audioMotionAt, type Motion } from './motion.js';
import { clipTiming } from './timing.js';

export interface AudioDriverOptions {
  readonly ffmpeg: FfmpegPaths;
  readonly path: string;
  readonly params: JobParams;
  readonly model: AudioMotionModel;
}

export async function openAudioDriver(options: AudioDriverOptions, signal: AbortSignal): Promise<Driver> {
  const { ffmpeg, path, params, model } = options;
  const samples = await decodeAudio(
    ffmpeg,
    path,
    { sampleRate: model.sampleRate, maxSeconds: params.duration_s },
    signal,
  ).catch((error: unknown) => {
    if (!(error instanceof FfmpegError)) throw error;
    throw new PermanentJobError('invalid_audio', 'The audio could not be decoded.', { cause: error });
  });
  if (samples.length === 0) throw new PermanentJobError('invalid_audio', 'The audio has no sound in it.');
  const timing = clipTiming({
    fps: params.fps,
    durationS: params.duration_s,
    driverSeconds: samples.length / model.sampleRate,
  });
  const frames = await model.motion(samples);

  async function* motions(): AsyncGenerator<Motion, void, undefined> {
    for (let i = 0; i < timing.frames; i++) yield audioMotionAt(frames, (i / timing.fps) * model.fps);
  }

  return { timing, audio: path, motions };
}
