// One portrait model folder as the renderer uses it: the four LivePortrait sessions behind calls
// that take pictures and keypoints and give back keypoint info, corrections and frames. Every
// name, size and the keypoint count are read from the sessions and checked against each other
// at load, so a folder that cannot render fails to load instead of failing a job.
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { ExecutionConfig, ModelEntry } from '@switchboard/models';
import { loadAudioMotionModel, type AudioMotionModel } from './audio-model.js';
import { headposeDegrees, POSE_BINS, type KeypointInfo } from './keypoints.js';
import { PORTRAIT_FILES } from './layout.js';
import { planarToRgb, rgbToPlanar } from './pixels.js';
import {
  fixedDim,
  floatData,
  floatOutput,
  floatTensor,
  inputInfo,
  onlyInput,
  onlyOutput,
  openSession,
  outputInfo,
} from './sessions.js';

/** The motion extractor's outputs, by name (their order differs between exports). */
const MOTION_OUTPUTS = ['pitch', 'yaw', 'roll', 't', 'exp', 'scale', 'kp'] as const;
/** The warping model's inputs, by name. */
const WARP_INPUTS = { feature: 'feature_3d', driving: 'kp_driving', source: 'kp_source' } as const;
/** LivePortrait's crop when an export leaves the size symbolic. */
const DEFAULT_CROP = 256;

export interface RgbFrame {
  readonly width: number;
  readonly height: number;
  /** RGB24, row-major. */
  readonly rgb: Uint8Array;
}

export interface PortraitModel {
  readonly id: string;
  /** The square crop both extractors take; source and driving pictures are brought to it. */
  readonly cropSize: number;
  readonly keypoints: number;
  /** Absent when the folder has no audio2motion/ model: audio-driven jobs cannot run on it. */
  readonly audio: AudioMotionModel | undefined;
  /** The appearance feature volume of an RGB24 crop (kept as a tensor: it goes back into warp). */
  appearance(rgb: Uint8Array): Promise<Tensor>;
  keypointInfo(rgb: Uint8Array): Promise<KeypointInfo>;
  /** The stitching correction for driven keypoints: [keypoints · 3 offsets, tx, ty]. */
  stitch(source: Float32Array, driving: Float32Array): Promise<Float32Array>;
  warp(feature: Tensor, source: Float32Array, driving: Float32Array): Promise<RgbFrame>;
  dispose(): Promise<void>;
}

function checkMotionExtractor(session: InferenceSession): { keypoints: number } {
  for (const name of MOTION_OUTPUTS) outputInfo(session, name, 'motion_extractor');
  for (const angle of ['pitch', 'yaw', 'roll']) {
    const bins = fixedDim(outputInfo(session, angle, 'motion_extractor'), -1, POSE_BINS);
    if (bins !== POSE_BINS && bins !== 1) throw new Error(`motion_extractor: ${angle} has ${bins} bins`);
  }
  const kp = outputInfo(session, 'kp', 'motion_extractor');
  const values = fixedDim(kp, -1, 63);
  if (values % 3 !== 0) throw new Error(`motion_extractor: kp has ${values} values, not a multiple of 3`);
  return { keypoints: values / 3 };
}

function checkStitching(session: InferenceSession, keypoints: number): void {
  const input = fixedDim(onlyInput(session, 'stitching'), -1, 6 * keypoints);
  const output = fixedDim(onlyOutput(session, 'stitching'), -1, 3 * keypoints + 2);
  if (input !== 6 * keypoints || output !== 3 * keypoints + 2) {
    throw new Error(
      `stitching takes ${input} and gives ${output} values; ${keypoints} keypoints need ${6 * keypoints} → ${3 * keypoints + 2}`,
    );
  }
}

export async function loadPortraitModel(
  entry: ModelEntry,
  execution: ExecutionConfig,
): Promise<PortraitModel> {
  const open = (file: string) => openSession(join(entry.dir, file), execution);
  const [appearance, motion, stitching, warping] = await Promise.all([
    open(PORTRAIT_FILES.appearance),
    open(PORTRAIT_FILES.motion),
    open(PORTRAIT_FILES.stitching),
    open(PORTRAIT_FILES.warping),
  ]);
  const sessions = [appearance, motion, stitching, warping];
  try {
    const { keypoints } = checkMotionExtractor(motion);
    checkStitching(stitching, keypoints);
    const motionInput = onlyInput(motion, 'motion_extractor');
    const appearanceInput = onlyInput(appearance, 'appearance_feature_extractor');
    const appearanceOutput = onlyOutput(appearance, 'appearance_feature_extractor').name;
    const cropSize = fixedDim(motionInput, -1, DEFAULT_CROP);
    if (fixedDim(appearanceInput, -1, cropSize) !== cropSize) {
      throw new Error('appearance_feature_extractor and motion_extractor take different crop sizes');
    }
    for (const name of Object.values(WARP_INPUTS)) inputInfo(warping, name, 'warping_spade');
    const warpOutput = onlyOutput(warping, 'warping_spade').name;
    const stitchInput = onlyInput(stitching, 'stitching').name;
    const stitchOutput = onlyOutput(stitching, 'stitching').name;
    const audio = await loadAudioMotionModel(entry.dir, execution, keypoints);
    const imageTensor = (rgb: Uint8Array) =>
      floatTensor(rgbToPlanar(rgb, cropSize, cropSize), [1, 3, cropSize, cropSize]);
    const kpTensor = (kp: Float32Array) => floatTensor(kp, [1, keypoints, 3]);

    return {
      id: entry.id,
      cropSize,
      keypoints,
      audio,
      async appearance(rgb) {
        const outputs = await appearance.run({ [appearanceInput.name]: imageTensor(rgb) });
        return floatOutput(outputs, appearanceOutput);
      },
      async keypointInfo(rgb) {
        const out = await motion.run({ [motionInput.name]: imageTensor(rgb) });
        const [tx = 0, ty = 0, tz = 0] = floatData(out, 't');
        return {
          pitch: headposeDegrees(floatData(out, 'pitch')),
          yaw: headposeDegrees(floatData(out, 'yaw')),
          roll: headposeDegrees(floatData(out, 'roll')),
          t: [tx, ty, tz],
          exp: floatData(out, 'exp').slice(0, 3 * keypoints),
          scale: floatData(out, 'scale')[0] ?? 1,
          kp: floatData(out, 'kp').slice(0, 3 * keypoints),
        };
      },
      async stitch(source, driving) {
        const input = new Float32Array(source.length + driving.length);
        input.set(source);
        input.set(driving, source.length);
        const out = await stitching.run({ [stitchInput]: floatTensor(input, [1, input.length]) });
        return floatData(out, stitchOutput);
      },
      async warp(feature, source, driving) {
        const out = await warping.run({
          [WARP_INPUTS.feature]: feature,
          [WARP_INPUTS.driving]: kpTensor(driving),
          [WARP_INPUTS.source]: kpTensor(source),
        });
        const image = floatOutput(out, warpOutput);
        const [, channels, height = 0, width = 0] = image.dims;
        if (image.dims.length !== 4 || channels !== 3)
          throw new Error(`warping gave [${image.dims.join(', ')}]`);
        return { width, height, rgb: planarToRgb(image.data as Float32Array, width, height) };
      },
      async dispose() {
        await Promise.all([...sessions.map((s) => s.release()), audio?.dispose()]);
      },
    };
  } catch (error) {
    await Promise.all(sessions.map((s) => s.release()));
    throw error;
  }
}
