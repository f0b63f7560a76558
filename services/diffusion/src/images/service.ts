// Image generation as the RPC sees it: check the request, take a place in the queue (which denoises
// it in a batch with the waiting requests that can share its UNet pass), encode and store the PNG
// (owner's key id as metadata) and answer where it is. Everything that can refuse a request does so
// before it takes a queue slot; encoding and storing happen after the slot is freed.
import type {
  GenerateImageRequest__Output,
  GenerateImageResponse,
  ListModelsResponse,
} from '@switchboard/contracts';
import { dependencyUnavailable, isSwitchboardError } from '@switchboard/errors';
import type { RequestContext } from '@switchboard/grpc';
import type { ModelRegistry } from '@switchboard/models';
import { OWNER_KEY_ID_METADATA, imageKey, newImageId, type ObjectStore } from '@switchboard/objectstore';
import type { DiffusionModel } from '../generation/diffusion-model.js';
import type { GenerationQueue } from './generation-queue.js';
import { ImagePhases } from './image-phases.js';
import { encodePng } from './png.js';
import { sizeLabel, type DiffusionMetrics } from '../metrics.js';
import { pixelBudget, type PixelBudgets } from './pixel-budget.js';
import { toImageRequest } from './request.js';

export class ImageService {
  constructor(
    private readonly registry: ModelRegistry<DiffusionModel>,
    private readonly queue: GenerationQueue,
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
    const phases = new ImagePhases({
      'diffusion.model': modelId,
      'diffusion.width': image.width,
      'diffusion.height': image.height,
    });
    try {
      const denoised = await this.queue.run({ modelId, model, image, phases }, ctx.signal, ctx.keyId ?? '');
      const png = await encodePng(denoised.pixels);
      const imageId = newImageId();
      ctx.signal.throwIfAborted();
      await this.store(imageId, png, ctx.keyId ?? '');
      this.metrics.stepsPerSecond.observe(labels, image.steps / denoised.loopSeconds);
      this.metrics.latency.observe(labels, (performance.now() - denoised.startedAt) / 1000);
      ctx.logger.info(
        {
          image_id: imageId,
          width: image.width,
          height: image.height,
          steps: image.steps,
          batch_size: denoised.batchSize,
          seconds: denoised.loopSeconds,
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
    } catch (error) {
      outcome = ctx.signal.aborted ? 'cancelled' : isSwitchboardError(error) ? error.code : 'error';
      // Ends whichever of its spans is still open (a no-op once its image was decoded).
      if (ctx.signal.aborted) phases.abandoned();
      else phases.failed(error);
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
      throw dependencyUnavailable('The image could not be stored.', error);
    }
  }
}
