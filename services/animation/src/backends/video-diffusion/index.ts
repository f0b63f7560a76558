// The `video-diffusion` back-end: image-to-video models of the Stable Video Diffusion family from
// MODEL_DIR/video-diffusion/<model-id>/, loaded once through the shared model registry and run on
// ONNX Runtime with the worker's execution providers. Jobs render with the default model.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry, scanRepository, type ExecutionConfig } from '@switchboard/models';
import type { Logger } from '@switchboard/telemetry';
import type { Backend, BackendInfo } from '../backend.js';
import type { FfmpegPaths } from '../../media/run-ffmpeg.js';
import type { GuidanceRange } from './denoise.js';
import { loadOnnxVideoPipeline } from './onnx-pipeline.js';
import { renderVideo } from './render.js';
import type { VideoModel } from './video-model.js';

export const CAPABILITY = 'video-diffusion';
/** diffusers' StableVideoDiffusionPipeline defaults: guidance 1.0 at the first frame, 3.0 at the last. */
export const DEFAULT_GUIDANCE: GuidanceRange = { min: 1, max: 3 };
/** Frames decoded at once: bounds the temporal decoder's memory (diffusers decodes all by default). */
export const DEFAULT_DECODE_CHUNK_SIZE = 8;

export interface VideoDiffusionOptions {
  readonly modelDir: string;
  readonly defaultModel?: string | undefined;
  /** Denoising steps per segment (diffusers' default for SVD is 25). */
  readonly steps: number;
  readonly execution: ExecutionConfig;
  readonly ffmpeg: FfmpegPaths;
  readonly logger: Logger;
  /** Test-only: delay before loading, so tests can watch the `loading` state. */
  readonly loadDelayMs?: number;
  /** Classifier-free guidance from the first to the last frame of each pass. */
  readonly guidance?: GuidanceRange | undefined;
  readonly decodeChunkSize?: number | undefined;
}

/** Whether the capability folder holds any pipeline folder (what `configured` reports before the scan ends). */
function hasModelFolder(capabilityDir: string): boolean {
  if (!existsSync(capabilityDir)) return false;
  return readdirSync(capabilityDir, { withFileTypes: true }).some(
    (e) => e.isDirectory() && existsSync(join(capabilityDir, e.name, 'model_index.json')),
  );
}

export function createVideoDiffusionBackend(options: VideoDiffusionOptions): Backend {
  if (!Number.isInteger(options.steps) || options.steps < 1)
    throw new Error('steps must be a positive integer');
  const decodeChunkSize = options.decodeChunkSize ?? DEFAULT_DECODE_CHUNK_SIZE;
  if (!Number.isInteger(decodeChunkSize) || decodeChunkSize < 1) {
    throw new Error('decodeChunkSize must be a positive integer');
  }
  const settings = {
    steps: options.steps,
    guidance: options.guidance ?? DEFAULT_GUIDANCE,
    decodeChunkSize,
    ffmpeg: options.ffmpeg,
  };
  const logger = options.logger.child({ backend: CAPABILITY });
  const configuredAtStart = hasModelFolder(join(options.modelDir, CAPABILITY));
  let registry: ModelRegistry<VideoModel> | undefined;
  let defaultModel: VideoModel | undefined;

  const setUp = (async () => {
    const scan = await scanRepository(options.modelDir, CAPABILITY, { defaultModel: options.defaultModel });
    registry = new ModelRegistry<VideoModel>({
      scan,
      logger,
      load: (entry) => loadOnnxVideoPipeline(entry, options.execution),
      dispose: (model) => model.dispose(),
      details: (model) => ({
        dtype: model.dtype,
        nativeWidth: model.nativeWidth,
        nativeHeight: model.nativeHeight,
      }),
      ...(options.loadDelayMs === undefined ? {} : { loadDelayMs: options.loadDelayMs }),
    });
    defaultModel = await registry.loadAll();
  })();
  // ready() reports the failure to whoever waits; nothing else may surface it as unhandled.
  setUp.catch(() => undefined);

  return {
    name: CAPABILITY,

    describe(): BackendInfo {
      const models = registry?.list() ?? [];
      return {
        name: CAPABILITY,
        configured: registry === undefined ? configuredAtStart : models.length > 0,
        models,
        nativeWidth: defaultModel?.nativeWidth,
        nativeHeight: defaultModel?.nativeHeight,
      };
    },

    ready: () => setUp,

    async render(request, out) {
      await setUp;
      // The default model's handle, or the registry's error (loading, failed).
      const { handle } = registry!.get('');
      await renderVideo(handle, request, out, settings);
    },

    async dispose() {
      await setUp.catch(() => undefined);
      await registry?.dispose();
    },
  };
}
