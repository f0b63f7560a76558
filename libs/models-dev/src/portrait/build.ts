// A tiny random-weight LivePortrait-style model folder, the layout the animation worker's
// `portrait` back-end loads from MODEL_DIR/portrait/<id>/: the published ONNX set's file names,
// tensor names, ranks and dtypes (appearance_feature_extractor, motion_extractor, stitching,
// stitching_eye, stitching_lip, warping_spade with its 5-D GridSample), our audio2motion/ model
// and config, and a config.json that marks the folder a development model. About 1.5 MB; the
// same seed gives the same bytes.
import type { Graph } from '../onnx/graph.js';
import { serializeModel } from '../onnx/serialize.js';
import { Random } from '../random.js';
import { writeModelFolder } from '../write.js';
import { buildAppearanceGraph } from './appearance.js';
import { buildAudioMotionGraph } from './audio2motion.js';
import { audioMotionConfigJson, PORTRAIT_FILES, portraitConfigJson, type PortraitShape } from './config.js';
import { buildMotionExtractorGraph } from './motion-extractor.js';
import { serializeModelAtOpset } from './serialize.js';
import { buildStitchingGraph } from './stitching.js';
import { buildWarpingGraph } from './warping.js';

export interface TinyPortraitOptions {
  readonly seed?: number;
}

export interface TinyPortrait {
  readonly shape: PortraitShape;
  readonly seed: number;
  /** File contents by path relative to the model folder, in a fixed order. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

/** The published set's sizes; only the networks' widths are tiny. */
export const TINY_PORTRAIT_SHAPE: PortraitShape = {
  cropSize: 256,
  outputSize: 512,
  featureChannels: 32,
  featureDepth: 16,
  featureSize: 64,
  keypoints: 21,
  poseBins: 66,
  mlpHidden: [32, 32],
  width: 8,
  audioSampleRate: 16000,
  motionFps: 25,
};

/** GridSample on the 5-D feature volume needs opset 20 (see serialize.ts). */
const WARPING_OPSET = 20;

const encoder = new TextEncoder();
const json = (value: object): Uint8Array => encoder.encode(`${JSON.stringify(value, null, 2)}\n`);

/** Builds the files of a tiny random-weight portrait model in memory. */
export function tinyPortraitFiles(options: TinyPortraitOptions = {}): TinyPortrait {
  const seed = options.seed ?? 0;
  const shape = TINY_PORTRAIT_SHAPE;
  const describe = (what: string) => ({
    docString: `Tiny random-weight ${what} for development and tests.`,
    metadata: { seed: String(seed) },
  });
  const model = (graph: Graph, what: string): Uint8Array => serializeModel(graph, describe(what));
  // One stream per graph, each from its own derived seed, so that changing how one network is
  // built leaves the others' weights as they were.
  const rng = (salt: number) => new Random(seed ^ salt);
  const files = new Map<string, Uint8Array>([
    [PORTRAIT_FILES.config, json(portraitConfigJson(shape, seed))],
    [
      PORTRAIT_FILES.appearance,
      model(buildAppearanceGraph(shape, rng(0xa1)), 'appearance feature extractor'),
    ],
    [PORTRAIT_FILES.motion, model(buildMotionExtractorGraph(shape, rng(0xb2)), 'motion extractor')],
    [PORTRAIT_FILES.stitching, model(buildStitchingGraph(shape, 'stitching', rng(0xc3)), 'stitching MLP')],
    [PORTRAIT_FILES.stitchingEye, model(buildStitchingGraph(shape, 'eye', rng(0xc4)), 'eye retargeting MLP')],
    [PORTRAIT_FILES.stitchingLip, model(buildStitchingGraph(shape, 'lip', rng(0xc5)), 'lip retargeting MLP')],
    [
      PORTRAIT_FILES.warping,
      serializeModelAtOpset(
        buildWarpingGraph(shape, rng(0xd6)),
        WARPING_OPSET,
        describe('warping + decoder'),
      ),
    ],
    [PORTRAIT_FILES.audioConfig, json(audioMotionConfigJson(shape, seed))],
    [PORTRAIT_FILES.audioModel, model(buildAudioMotionGraph(shape, rng(0xe7)), 'audio-to-motion model')],
  ]);
  return { shape, seed, files };
}

/** Writes a tiny portrait model into `dir` (which must not exist or be empty). */
export async function buildTinyPortrait(
  dir: string,
  options: TinyPortraitOptions = {},
): Promise<TinyPortrait> {
  const portrait = tinyPortraitFiles(options);
  await writeModelFolder(dir, portrait.files);
  return portrait;
}
