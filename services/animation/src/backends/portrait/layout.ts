// MODEL_DIR/portrait/<model-id>/: the LivePortrait ONNX set as FasterLivePortrait publishes it
// (`liveportrait_onnx/` of the warmshao/FasterLivePortrait release), under its own file names, plus
// our optional audio-to-motion model:
//
//   appearance_feature_extractor.onnx  img [1,3,256,256] → feature volume [1,32,16,64,64]
//   motion_extractor.onnx              img [1,3,256,256] → pitch/yaw/roll [1,66], t [1,3],
//                                      exp [1,63], scale [1,1], kp [1,63]
//   stitching.onnx                     input [1,126] → output [1,65]
//   warping_spade.onnx                 feature_3d, kp_driving [1,21,3], kp_source [1,21,3]
//                                      → out [1,3,512,512] in [0,1]
//   stitching_eye.onnx, stitching_lip.onnx, landmark.onnx, retinaface_*.onnx  may be there; unused
//   audio2motion/model.onnx + config.json  optional; needed for audio-driven jobs
//   config.json                        optional; only its development-model note is read
//
// A folder is a model when it holds the four files every job needs. Names are matched to the
// sessions' own metadata at load, never assumed from their order.
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The capability folder under MODEL_DIR. */
export const PORTRAIT_CAPABILITY = 'portrait';

export const PORTRAIT_FILES = {
  appearance: 'appearance_feature_extractor.onnx',
  motion: 'motion_extractor.onnx',
  stitching: 'stitching.onnx',
  warping: 'warping_spade.onnx',
  audioModel: join('audio2motion', 'model.onnx'),
  audioConfig: join('audio2motion', 'config.json'),
} as const;

/** What makes a folder a portrait model (scanRepository's requiredFiles). */
export const REQUIRED_FILES: readonly string[] = [
  PORTRAIT_FILES.appearance,
  PORTRAIT_FILES.motion,
  PORTRAIT_FILES.stitching,
  PORTRAIT_FILES.warping,
];

/** Whether `capabilityDir` holds at least one model folder (read synchronously, for describe()). */
export function hasPortraitModel(capabilityDir: string): boolean {
  if (!existsSync(capabilityDir)) return false;
  return readdirSync(capabilityDir, { withFileTypes: true }).some(
    (e) => e.isDirectory() && REQUIRED_FILES.every((f) => existsSync(join(capabilityDir, e.name, f))),
  );
}

/** audio2motion/config.json: the rate the model takes PCM at and the rate its motion frames come at. */
export interface AudioMotionConfig {
  readonly sampleRate: number;
  readonly fps: number;
}

/** The audio model's config, or undefined when the folder has no audio-to-motion model. */
export async function readAudioMotionConfig(modelDir: string): Promise<AudioMotionConfig | undefined> {
  if (!existsSync(join(modelDir, PORTRAIT_FILES.audioModel))) return undefined;
  const raw = JSON.parse(await readFile(join(modelDir, PORTRAIT_FILES.audioConfig), 'utf8')) as Record<
    string,
    unknown
  >;
  const { sample_rate: sampleRate, fps } = raw;
  if (typeof sampleRate !== 'number' || !Number.isInteger(sampleRate) || sampleRate <= 0) {
    throw new Error(`${PORTRAIT_FILES.audioConfig}: sample_rate must be a positive integer`);
  }
  if (typeof fps !== 'number' || !Number.isInteger(fps) || fps <= 0 || sampleRate % fps !== 0) {
    throw new Error(`${PORTRAIT_FILES.audioConfig}: fps must be a positive integer dividing sample_rate`);
  }
  return { sampleRate, fps };
}
