// Image generation as the RPC sees it: check the request, take a place in the queue, run the
// pipeline, store the PNG (owner's key id as metadata) and answer where it is. Everything that can
// refuse a request does so before it takes a queue slot.
import type {
  GenerateImageRequest__Output,
  GenerateImageResponse,
  ListModelsResponse,
} from '@switchboard/contracts';
import { isSwitchboardError, SwitchboardError } from '@switchboard/errors';
import type { RequestContext } from '@switchboard/grpc';
import type { ModelRegistry, WorkQueue } from '@switchboard/models';
import { OWNER_KEY_ID_METADATA, imageKey, newImageId, type ObjectStore } from '@switchboard/objectstore';
import { denoise } from '../generation/denoise.js';
import type { DiffusionModel } from '../generation/diffusion-model.js';
import { encodePng } from './png.js';
import { sizeLabel, type DiffusionMetrics } from '../metrics.js';
import { pixelBudget, type PixelBudgets } from './pixel-budget.js';
import { toImageRequest } from './request.js';

export class ImageService {
  constructor(
    private readonly registry: ModelRegistry<DiffusionModel>,
    private readonly queue: WorkQueue,
    private readonly metrics: DiffusionMetrics,
    private readonly objects: ObjectStore,
    private readonly options: { defaultGuidanceScale: number; maxPixels: PixelBudgets },
  ) {}

  async generate(request: GenerateImageRequest__Output, ctx: RequestContext): Promise<GenerateImageResponse> {
    const { id: modelId, handle: model } = this.registry.get(request.model);
    const image = toImageRequest(request, {
      guidanceScale: this.options.defaultGuidanceScale,
      sideMultiple: model.vaeScaleFactor,
      maxPixels: pixelBudget(modelId, model.nativePixels, this.options.maxPixels),
    });
    const labels = { model: modelId, size: sizeLabel(image.width, image.height) };
    let outcome = 'ok';
    try {
      return await this.queue.run(async () => {
        const started = performance.now();
        const pixels = await denoise(model, image, ctx.signal, {
          onStep: () => this.metrics.steps.inc({ model: modelId }),
        });
        const loopSeconds = (performance.now() - started) / 1000;
        const png = await encodePng(pixels);
        const imageId = newImageId();
        ctx.signal.throwIfAborted();
        await this.store(imageId, png, ctx.keyId ?? '');
        this.metrics.stepsPerSecond.observe(labels, image.steps / loopSeconds);
        this.metrics.latency.observe(labels, (performance.now() - started) / 1000);
        ctx.logger.info(
          {
            image_id: imageId,
            width: image.width,
            height: image.height,
            steps: image.steps,
            seconds: loopSeconds,
          },
          'image generated',
        );
        return {
          image_id: imageId,
          width: image.width,
          height: image.height,
          steps: image.steps,
          seed: String(image.seed),
          model: modelId,
          created: String(Math.floor(Date.now() / 1000)),
        };
      }, ctx.signal);
    } catch (error) {
      outcome = ctx.signal.aborted ? 'cancelled' : isSwitchboardError(error) ? error.code : 'error';
      throw error;
    } finally {
      this.metrics.images.inc({ model: modelId, outcome });
    }
  }

  listModels(): ListModelsResponse {
    return this.registry.listModelsResponse();
  }

  private async store(imageId: string, png: Buffer, ownerKeyId: string): Promise<void> {
    try {
      await this.objects.put(imageKey(imageId), png, {
        contentType: 'image/png',
        size: png.length,
        metadata: { [OWNER_KEY_ID_METADATA]: ownerKeyId },
      });
    } catch (error) {
      throw new SwitchboardError('unavailable', { message: 'The image could not be stored.', cause: error });
    }
  }
}
