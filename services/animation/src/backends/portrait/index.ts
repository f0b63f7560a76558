// The `portrait` back-end: LivePortrait-family ONNX sets from MODEL_DIR/portrait/<id>/ (layout.ts),
// driven by a face video or by speech, rendered frame by frame into 512×512 RGB24 frames.
// Models load through the shared repository scan and registry, so /models lists them like every
// other worker's; jobs run on the default model.
import { join } from 'node:path';
import { ModelRegistry, scanRepository, type ExecutionConfig } from '@switchboard/models';
import type { Logger } from '@switchboard/telemetry';
import type { Backend, BackendInfo } from '../backend.js';
import type { FfmpegPaths } from '../../media/run-ffmpeg.js';
import { hasPortraitModel, PORTRAIT_CAPABILITY, REQUIRED_FILES } from './layout.js';
import { loadPortraitModel, type PortraitModel } from './portrait-model.js';
import { renderPortrait } from './render.js';

export interface PortraitBackendOptions {
  readonly modelDir: string;
  /** PORTRAIT_DEFAULT_MODEL: wins over portrait/models.json and the alphabetical first. */
  readonly defaultModel?: string | undefined;
  readonly execution: ExecutionConfig;
  readonly ffmpeg: FfmpegPaths;
  readonly logger: Logger;
  /** Test-only: wait this long before loading, so tests can watch the `loading` state. */
  readonly loadDelayMs?: number;
}

export function createPortraitBackend(options: PortraitBackendOptions): Backend {
  const logger = options.logger.child({ backend: 'portrait' });
  const configured = hasPortraitModel(join(options.modelDir, PORTRAIT_CAPABILITY));
  let registry: ModelRegistry<PortraitModel> | undefined;
  const scanned = (async () => {
    const scan = await scanRepository(options.modelDir, PORTRAIT_CAPABILITY, {
      defaultModel: options.defaultModel,
      requiredFiles: REQUIRED_FILES,
    });
    registry = new ModelRegistry<PortraitModel>({
      scan,
      logger,
      load: (entry) => loadPortraitModel(entry, options.execution),
      dispose: (model) => model.dispose(),
      ...(options.loadDelayMs === undefined ? {} : { loadDelayMs: options.loadDelayMs }),
    });
    return registry;
  })();
  // A bad default model surfaces through ready() and render(); here it must not go unhandled.
  scanned.catch((error: unknown) => logger.error({ err: error }, 'portrait model scan failed'));

  return {
    name: 'portrait',

    describe(): BackendInfo {
      const models = registry?.list() ?? [];
      return { name: 'portrait', configured, models };
    },

    async ready() {
      await (await scanned).loadAll();
    },

    async render(request, out) {
      const models = await scanned;
      // Wait for the default to finish loading; get() then says model_loading/unavailable if not.
      await models.loadAll().catch(() => undefined);
      const { handle } = models.get('');
      await renderPortrait(handle, request, out, options.ffmpeg);
    },

    async dispose() {
      const models = await scanned.catch(() => undefined);
      await models?.dispose();
    },
  };
}
