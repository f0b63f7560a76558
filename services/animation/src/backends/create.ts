// The back-ends this worker serves (ANIMATION_BACKENDS), built from its config.
import type { Logger } from '@switchboard/telemetry';
import type { AnimationConfig } from '../config.js';
import type { AnimationMetrics } from '../metrics.js';
import { createAvatarBackend } from './avatar/index.js';
import type { Backend, BackendName } from './backend.js';
import { createPortraitBackend } from './portrait/index.js';
import { createVideoDiffusionBackend } from './video-diffusion/index.js';

export function createBackends(
  config: AnimationConfig,
  metrics: AnimationMetrics,
  logger: Logger,
): Backend[] {
  const common = { modelDir: config.modelDir, execution: config.execution, ffmpeg: config.ffmpeg, logger };
  const build: Record<BackendName, () => Backend> = {
    'video-diffusion': () =>
      createVideoDiffusionBackend({ ...common, ...config.videoDiffusion, loadDelayMs: config.loadDelayMs }),
    portrait: () => createPortraitBackend({ ...common, ...config.portrait, loadDelayMs: config.loadDelayMs }),
    avatar: () =>
      createAvatarBackend({
        ...config.avatar,
        ffmpeg: config.ffmpeg,
        logger,
        onVendorError: (kind) => metrics.vendorErrors.inc({ kind }),
      }),
  };
  return config.backends.map((name) => build[name]());
}
