// The tiny LivePortrait-style set: its shape, the file names of the ONNX set as FasterLivePortrait
// publishes it (`liveportrait_onnx/`), and the two JSON files we add: `config.json` at the top,
// which only carries the development-model marker, and `audio2motion/config.json`, the contract of
// our audio-to-motion model (the published set has none).
import { DEV_MODEL_MARKER } from '../marker.js';

export interface PortraitShape {
  /** Side of the square crop both extractors take (`img` [1, 3, 256, 256]). */
  readonly cropSize: number;
  /** Side of the warping model's image (`out` [1, 3, 512, 512]). */
  readonly outputSize: number;
  /** `feature_3d` is [1, featureChannels, featureDepth, featureSize, featureSize] = [1, 32, 16, 64, 64]. */
  readonly featureChannels: number;
  readonly featureDepth: number;
  readonly featureSize: number;
  /** Implicit keypoints (21): `kp` and `exp` are [1, 3·keypoints]. */
  readonly keypoints: number;
  /** Head-pose bins per angle (66, 3° apart). */
  readonly poseBins: number;
  /** Hidden sizes of the stitching and retargeting MLPs (real: [128, 128, 64] and wider). */
  readonly mlpHidden: readonly number[];
  /** Channel width of the tiny convolutional networks (the real ones are 64–512 wide). */
  readonly width: number;
  /** audio2motion: mono PCM in at this rate, one motion frame out per `sampleRate / motionFps` samples. */
  readonly audioSampleRate: number;
  readonly motionFps: number;
}

/** Files of a portrait model folder, relative to it. */
export const PORTRAIT_FILES = {
  config: 'config.json',
  appearance: 'appearance_feature_extractor.onnx',
  motion: 'motion_extractor.onnx',
  stitching: 'stitching.onnx',
  stitchingEye: 'stitching_eye.onnx',
  stitchingLip: 'stitching_lip.onnx',
  warping: 'warping_spade.onnx',
  audioModel: 'audio2motion/model.onnx',
  audioConfig: 'audio2motion/config.json',
} as const;

/** The motion extractor's outputs, in the order the published export declares them. */
export const MOTION_OUTPUTS = ['pitch', 'yaw', 'roll', 't', 'exp', 'scale', 'kp'] as const;

/** audio2motion outputs, per motion frame: see audio2motion.ts for their meaning. */
export const AUDIO_MOTION_OUTPUTS = ['exp', 'pose', 't', 'scale'] as const;

const marker = (seed: number): object => ({
  [DEV_MODEL_MARKER]: {
    description: 'Tiny random-weight development model built by @switchboard/models-dev; its video is noise.',
    seed,
  },
});

/** config.json at the top of the folder: only what tells operators this model is noise. */
export function portraitConfigJson(s: PortraitShape, seed: number): object {
  return {
    model_type: 'liveportrait',
    num_kp: s.keypoints,
    ...marker(seed),
  };
}

/** audio2motion/config.json: the rates the worker feeds and reads the model at. */
export function audioMotionConfigJson(s: PortraitShape, seed: number): object {
  return {
    model_type: 'switchboard_audio2motion',
    sample_rate: s.audioSampleRate,
    fps: s.motionFps,
    num_kp: s.keypoints,
    ...marker(seed),
  };
}
