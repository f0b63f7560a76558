// audio2motion/model.onnx, our audio-to-motion contract (the published LivePortrait set has none):
//   in   `audio`  float32 [batch, samples]: mono PCM at config.sample_rate, a whole number of
//                 motion frames long (sample_rate / fps samples each; the worker pads with silence)
//   out  per motion frame at config.fps, relative to the source portrait:
//        `exp` [batch, frames, 3·keypoints] expression offsets   `pose` [batch, frames, 3] pitch,
//        yaw, roll changes in degrees   `t` [batch, frames, 3]   `scale` [batch, frames, 1] ratio
// The whole clip goes through in one run (60 s at 16 kHz is under 4 MB of samples).
import { join } from 'node:path';
import type { ExecutionConfig } from '@switchboard/models';
import type { AudioMotionFrame } from './motion.js';
import { PORTRAIT_FILES, readAudioMotionConfig } from './layout.js';
import { floatData, floatTensor, onlyInput, openSession, outputInfo } from './sessions.js';

const OUTPUTS = ['exp', 'pose', 't', 'scale'] as const;

export interface AudioMotionModel {
  /** The PCM rate the model takes; decode the audio at this rate. */
  readonly sampleRate: number;
  /** Motion frames per second of audio. */
  readonly fps: number;
  /** One motion frame per sampleRate / fps samples (the last partial window padded with silence). */
  motion(samples: Float32Array): Promise<AudioMotionFrame[]>;
  dispose(): Promise<void>;
}

export async function loadAudioMotionModel(
  modelDir: string,
  execution: ExecutionConfig,
  keypoints: number,
): Promise<AudioMotionModel | undefined> {
  const config = await readAudioMotionConfig(modelDir);
  if (config === undefined) return undefined;
  const session = await openSession(join(modelDir, PORTRAIT_FILES.audioModel), execution);
  try {
    for (const name of OUTPUTS) outputInfo(session, name, 'audio2motion');
  } catch (error) {
    await session.release();
    throw error;
  }
  const input = onlyInput(session, 'audio2motion').name;
  const window = config.sampleRate / config.fps;

  return {
    ...config,
    async motion(samples) {
      const frames = Math.max(1, Math.ceil(samples.length / window));
      const padded = new Float32Array(frames * window);
      padded.set(samples);
      const out = await session.run({ [input]: floatTensor(padded, [1, padded.length]) });
      const [exp, pose, t, scale] = OUTPUTS.map((name) => floatData(out, name)) as [
        Float32Array,
        Float32Array,
        Float32Array,
        Float32Array,
      ];
      const width = 3 * keypoints;
      if (exp.length !== frames * width || pose.length !== frames * 3 || t.length !== frames * 3) {
        throw new Error(`audio2motion gave ${exp.length / width} frames for ${frames} windows`);
      }
      return Array.from({ length: frames }, (_, f) => ({
        exp: exp.slice(f * width, (f + 1) * width),
        pose: [pose[3 * f] ?? 0, pose[3 * f + 1] ?? 0, pose[3 * f + 2] ?? 0],
        t: [t[3 * f] ?? 0, t[3 * f + 1] ?? 0, t[3 * f + 2] ?? 0],
        scale: scale[f] ?? 1,
      }));
    },
    dispose: () => session.release(),
  };
}
